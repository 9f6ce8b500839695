#!/usr/bin/env python3
"""Writes api.json beside this file: an OpenAPI-like description of an online shop's back
office with exactly 100 operations, from which tests/build.rs makes one tool per operation
(the code-mode measurements over a hundred tools). Each operation's path, query and body
parameters are folded into one JSON Schema object, as a tool takes them.

    python3 tests/guests/api/generate.py   # rewrites tests/guests/api/api.json

Deterministic: the same script writes the same bytes.
"""

import json
from pathlib import Path

ID = {"type": "string", "pattern": "^[a-z]{2,4}_[0-9A-Za-z]{8,24}$"}
MONEY = {"type": "integer", "minimum": 0, "description": "An amount in the currency's minor unit (cents)."}
CURRENCY = {"type": "string", "enum": ["USD", "EUR", "GBP", "JPY", "CAD"], "description": "ISO 4217 currency code."}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "How many items one page holds."}
CURSOR = {"type": "string", "description": "The `next_cursor` of the previous page; omit it for the first page."}
EMAIL = {"type": "string", "format": "email"}
DATE_TIME = {"type": "string", "format": "date-time"}
DATE = {"type": "string", "format": "date"}


def ident(what):
    return {**ID, "description": f"The {what}'s id."}


def prop(schema, description):
    return {**schema, "description": description}


def op(operation_id, method, path, summary, properties, required=()):
    return {
        "operationId": operation_id,
        "method": method,
        "path": path,
        "summary": summary,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": list(required),
            "additionalProperties": False,
        },
    }


def crud(resource, singular, path, fields, required_create, filters, verbs, about):
    """The usual operations of one resource: a subset of list, get, create, update, delete."""
    ops = []
    key = f"{singular.replace(' ', '_')}_id"
    if "list" in verbs:
        ops.append(op(f"{resource}_list", "GET", path, f"Lists {about}, newest first, one page at a time. "
                      f"Filter by the parameters given; use `cursor` to read the next page.",
                      {**filters, "limit": LIMIT, "cursor": CURSOR}))
    if "get" in verbs:
        ops.append(op(f"{resource}_get", "GET", f"{path}/{{{key}}}", f"Gets one {singular} by its id, with all its fields.",
                      {key: ident(singular)}, [key]))
    if "create" in verbs:
        ops.append(op(f"{resource}_create", "POST", path, f"Creates a {singular} and returns it with its new id.",
                      fields, required_create))
    if "update" in verbs:
        ops.append(op(f"{resource}_update", "PATCH", f"{path}/{{{key}}}",
                      f"Updates some fields of a {singular}; fields left out keep their value.",
                      {key: ident(singular), **fields}, [key]))
    if "delete" in verbs:
        ops.append(op(f"{resource}_delete", "DELETE", f"{path}/{{{key}}}",
                      f"Deletes a {singular} permanently. This cannot be undone.", {key: ident(singular)}, [key]))
    return ops


ADDRESS = {
    "type": "object",
    "properties": {
        "line1": {"type": "string"},
        "line2": {"type": "string"},
        "city": {"type": "string"},
        "postal_code": {"type": "string"},
        "country": {"type": "string", "pattern": "^[A-Z]{2}$", "description": "ISO 3166-1 alpha-2 country code."},
    },
    "required": ["line1", "city", "postal_code", "country"],
}
LINE_ITEMS = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "properties": {"product_id": ident("product"), "quantity": {"type": "integer", "minimum": 1}},
        "required": ["product_id", "quantity"],
    },
    "description": "The products and how many of each.",
}
ORDER_STATUS = {"type": "string", "enum": ["pending", "paid", "fulfilled", "cancelled", "refunded"]}


def operations():
    ops = []
    ops += crud("customers", "customer", "/customers", {
        "email": prop(EMAIL, "The customer's email address."),
        "name": prop({"type": "string", "maxLength": 200}, "The customer's full name."),
        "phone": prop({"type": "string"}, "A phone number in E.164 format, e.g. +14155550100."),
        "marketing_opt_in": prop({"type": "boolean"}, "Whether the customer agreed to marketing emails."),
    }, ["email", "name"], {
        "email": prop(EMAIL, "Only the customer with this email address."),
        "created_after": prop(DATE_TIME, "Only customers who signed up after this instant."),
    }, ["list", "get", "create", "update", "delete"], "the shop's customers")
    ops += [
        op("addresses_list", "GET", "/customers/{customer_id}/addresses", "Lists a customer's saved shipping and billing addresses.",
           {"customer_id": ident("customer")}, ["customer_id"]),
        op("addresses_create", "POST", "/customers/{customer_id}/addresses", "Saves a new shipping or billing address for a customer.",
           {"customer_id": ident("customer"), "kind": {"type": "string", "enum": ["shipping", "billing"]},
            "address": ADDRESS}, ["customer_id", "kind", "address"]),
        op("addresses_delete", "DELETE", "/customers/{customer_id}/addresses/{address_id}", "Removes a saved address from a customer's address book.",
           {"customer_id": ident("customer"), "address_id": ident("address")}, ["customer_id", "address_id"]),
    ]
    ops += crud("orders", "order", "/orders", {
        "customer_id": ident("customer"),
        "items": LINE_ITEMS,
        "shipping_address": ADDRESS,
        "coupon_code": prop({"type": "string"}, "A coupon code to apply to the order."),
        "currency": CURRENCY,
    }, ["customer_id", "items", "shipping_address"], {
        "customer_id": prop(ID, "Only this customer's orders."),
        "status": prop(ORDER_STATUS, "Only orders in this status."),
        "placed_after": prop(DATE_TIME, "Only orders placed after this instant."),
    }, ["list", "get", "create", "update"], "orders")
    ops.append(op("orders_cancel", "POST", "/orders/{order_id}/cancel",
                  "Cancels an order that has not shipped yet and releases its reserved stock. A paid order is refunded in full.",
                  {"order_id": ident("order"), "reason": {"type": "string", "enum": ["customer_request", "fraud", "out_of_stock", "other"]}},
                  ["order_id", "reason"]))
    ops += crud("products", "product", "/products", {
        "title": prop({"type": "string", "maxLength": 250}, "The product's title as shoppers see it."),
        "sku": prop({"type": "string", "pattern": "^[A-Z0-9-]{4,32}$"}, "The stock keeping unit, unique in the shop."),
        "price": MONEY,
        "currency": CURRENCY,
        "category_id": ident("category"),
        "active": prop({"type": "boolean"}, "Whether shoppers can buy it."),
    }, ["title", "sku", "price", "currency"], {
        "category_id": prop(ID, "Only products in this category."),
        "search": prop({"type": "string"}, "Words to look for in titles and descriptions."),
        "active": prop({"type": "boolean"}, "Only active (or only inactive) products."),
    }, ["list", "get", "create", "update", "delete"], "products in the catalog")
    ops += crud("categories", "category", "/categories", {
        "name": prop({"type": "string"}, "The category's name."),
        "parent_id": ident("parent category"),
    }, ["name"], {}, ["list", "create", "update", "delete"], "catalog categories")
    ops += [
        op("inventory_get", "GET", "/inventory/{product_id}", "Gets a product's stock level in each warehouse: on hand, reserved and available.",
           {"product_id": ident("product")}, ["product_id"]),
        op("inventory_adjust", "POST", "/inventory/{product_id}/adjustments",
           "Adjusts the stock on hand of a product in one warehouse, e.g. after a stock count or damage.",
           {"product_id": ident("product"), "warehouse_id": ident("warehouse"),
            "delta": prop({"type": "integer"}, "Units to add (positive) or remove (negative)."),
            "reason": {"type": "string", "enum": ["stock_count", "damaged", "lost", "found"]}},
           ["product_id", "warehouse_id", "delta", "reason"]),
        op("inventory_transfer", "POST", "/inventory/transfers", "Moves units of a product from one warehouse to another.",
           {"product_id": ident("product"), "from_warehouse_id": ident("source warehouse"),
            "to_warehouse_id": ident("destination warehouse"), "quantity": {"type": "integer", "minimum": 1}},
           ["product_id", "from_warehouse_id", "to_warehouse_id", "quantity"]),
    ]
    ops += crud("warehouses", "warehouse", "/warehouses", {
        "name": prop({"type": "string"}, "The warehouse's name."),
        "address": ADDRESS,
        "active": prop({"type": "boolean"}, "Whether orders may ship from it."),
    }, ["name", "address"], {"active": prop({"type": "boolean"}, "Only active (or only inactive) warehouses.")},
        ["list", "get", "create", "update"], "warehouses")
    ops += crud("suppliers", "supplier", "/suppliers", {
        "name": prop({"type": "string"}, "The supplier's company name."),
        "contact_email": prop(EMAIL, "Where purchase orders are sent."),
        "lead_time_days": prop({"type": "integer", "minimum": 0}, "Days from ordering to delivery."),
    }, ["name", "contact_email"], {}, ["list", "get", "create", "update", "delete"], "suppliers")
    ops += crud("purchase_orders", "purchase order", "/purchase-orders", {
        "supplier_id": ident("supplier"),
        "warehouse_id": ident("receiving warehouse"),
        "items": LINE_ITEMS,
        "expected_on": prop(DATE, "When the delivery is expected."),
    }, ["supplier_id", "warehouse_id", "items"], {"supplier_id": prop(ID, "Only this supplier's purchase orders.")},
        ["list", "get", "create"], "purchase orders sent to suppliers")
    ops.append(op("purchase_orders_receive", "POST", "/purchase-orders/{purchase_order_id}/receive",
                  "Records the delivery of a purchase order and adds the received units to the warehouse's stock.",
                  {"purchase_order_id": ident("purchase order"),
                   "received": {"type": "array", "items": {"type": "object", "properties": {
                       "product_id": ident("product"), "quantity": {"type": "integer", "minimum": 0}},
                       "required": ["product_id", "quantity"]}, "description": "Units received per product."}},
                  ["purchase_order_id", "received"]))
    ops += [
        op("invoices_list", "GET", "/invoices", "Lists invoices, newest first; give `customer_id` to list one customer's invoices.",
           {"customer_id": prop(ID, "Only this customer's invoices."),
            "status": {"type": "string", "enum": ["draft", "open", "paid", "void"]}, "limit": LIMIT, "cursor": CURSOR}),
        op("invoices_get", "GET", "/invoices/{invoice_id}", "Gets one invoice with its lines, taxes and payment status.",
           {"invoice_id": ident("invoice")}, ["invoice_id"]),
        op("invoices_create", "POST", "/invoices", "Issues an invoice for an order, due after the given number of days.",
           {"order_id": ident("order"), "due_in_days": {"type": "integer", "minimum": 0, "maximum": 120, "default": 30}},
           ["order_id"]),
        op("invoices_void", "POST", "/invoices/{invoice_id}/void", "Voids an open invoice so that it can no longer be paid.",
           {"invoice_id": ident("invoice")}, ["invoice_id"]),
        op("invoices_send", "POST", "/invoices/{invoice_id}/send", "Emails an invoice as a PDF to the customer's billing email address.",
           {"invoice_id": ident("invoice"), "cc": {"type": "array", "items": EMAIL, "description": "More recipients."}},
           ["invoice_id"]),
    ]
    ops += [
        op("payments_list", "GET", "/payments", "Lists card and bank payments received, newest first.",
           {"order_id": prop(ID, "Only this order's payments."),
            "status": {"type": "string", "enum": ["authorized", "captured", "failed", "refunded"]}, "limit": LIMIT, "cursor": CURSOR}),
        op("payments_get", "GET", "/payments/{payment_id}", "Gets one payment: amount, method, status and the order it pays.",
           {"payment_id": ident("payment")}, ["payment_id"]),
        op("payments_capture", "POST", "/payments/{payment_id}/capture", "Captures an authorized card payment, charging the customer.",
           {"payment_id": ident("payment"), "amount": {**MONEY, "description": "How much to capture; the whole authorization when left out."}},
           ["payment_id"]),
        op("refunds_list", "GET", "/refunds", "Lists refunds issued to customers, newest first.",
           {"payment_id": prop(ID, "Only this payment's refunds."), "limit": LIMIT, "cursor": CURSOR}),
        op("refunds_get", "GET", "/refunds/{refund_id}", "Gets one refund and whether the money has reached the customer.",
           {"refund_id": ident("refund")}, ["refund_id"]),
        op("refunds_create", "POST", "/refunds", "Refunds a captured payment to the customer, in full or in part.",
           {"payment_id": ident("payment"), "amount": {**MONEY, "description": "How much to refund; the whole payment when left out."},
            "reason": {"type": "string", "enum": ["requested_by_customer", "duplicate", "fraudulent", "damaged_goods"]}},
           ["payment_id", "reason"]),
    ]
    ops += [
        op("shipments_list", "GET", "/shipments", "Lists shipments, newest first.",
           {"order_id": prop(ID, "Only this order's shipments."),
            "status": {"type": "string", "enum": ["label_created", "in_transit", "delivered", "exception"]}, "limit": LIMIT, "cursor": CURSOR}),
        op("shipments_get", "GET", "/shipments/{shipment_id}", "Gets one shipment with its carrier, tracking number and packages.",
           {"shipment_id": ident("shipment")}, ["shipment_id"]),
        op("shipments_create", "POST", "/shipments", "Ships an order's items from a warehouse: buys a carrier label and marks the items fulfilled.",
           {"order_id": ident("order"), "warehouse_id": ident("warehouse"),
            "carrier": {"type": "string", "enum": ["ups", "fedex", "dhl", "usps"]},
            "service": {"type": "string", "enum": ["ground", "express", "overnight"], "default": "ground"}},
           ["order_id", "warehouse_id", "carrier"]),
        op("shipments_track", "GET", "/shipments/{shipment_id}/tracking", "Tracks a shipment: the carrier's scan events and the estimated delivery date.",
           {"shipment_id": ident("shipment")}, ["shipment_id"]),
        op("shipments_cancel", "POST", "/shipments/{shipment_id}/cancel", "Cancels a shipment before the carrier picks it up and voids its label.",
           {"shipment_id": ident("shipment")}, ["shipment_id"]),
    ]
    ops += [
        op("returns_list", "GET", "/returns", "Lists return requests (RMAs) from customers.",
           {"status": {"type": "string", "enum": ["requested", "approved", "rejected", "received"]}, "limit": LIMIT, "cursor": CURSOR}),
        op("returns_get", "GET", "/returns/{return_id}", "Gets one return request with its items and reason.",
           {"return_id": ident("return")}, ["return_id"]),
        op("returns_create", "POST", "/returns", "Opens a return request for items of a delivered order.",
           {"order_id": ident("order"), "items": LINE_ITEMS,
            "reason": {"type": "string", "enum": ["wrong_size", "defective", "not_as_described", "changed_mind"]}},
           ["order_id", "items", "reason"]),
        op("returns_approve", "POST", "/returns/{return_id}/approve", "Approves a return request and emails the customer a prepaid return label.",
           {"return_id": ident("return")}, ["return_id"]),
        op("returns_reject", "POST", "/returns/{return_id}/reject", "Rejects a return request, telling the customer why.",
           {"return_id": ident("return"), "message": prop({"type": "string"}, "The explanation sent to the customer.")},
           ["return_id", "message"]),
    ]
    ops += crud("coupons", "coupon", "/coupons", {
        "code": prop({"type": "string", "pattern": "^[A-Z0-9]{4,20}$"}, "The code shoppers type at checkout."),
        "percent_off": prop({"type": "number", "exclusiveMinimum": 0, "maximum": 100}, "The discount in percent."),
        "expires_at": prop(DATE_TIME, "When the coupon stops working."),
        "max_redemptions": prop({"type": "integer", "minimum": 1}, "How many times it may be used in all."),
    }, ["code", "percent_off"], {"active": prop({"type": "boolean"}, "Only coupons that still work.")},
        ["list", "get", "create", "update", "delete"], "discount coupons")
    ops += [
        op("reviews_list", "GET", "/reviews", "Lists product reviews written by customers.",
           {"product_id": prop(ID, "Only this product's reviews."),
            "status": {"type": "string", "enum": ["pending", "published", "hidden"]},
            "min_rating": {"type": "integer", "minimum": 1, "maximum": 5}, "limit": LIMIT, "cursor": CURSOR}),
        op("reviews_get", "GET", "/reviews/{review_id}", "Gets one product review with its rating and text.",
           {"review_id": ident("review")}, ["review_id"]),
        op("reviews_moderate", "POST", "/reviews/{review_id}/moderate", "Publishes or hides a pending product review.",
           {"review_id": ident("review"), "decision": {"type": "string", "enum": ["publish", "hide"]}}, ["review_id", "decision"]),
        op("reviews_delete", "DELETE", "/reviews/{review_id}", "Deletes a product review permanently, e.g. spam.",
           {"review_id": ident("review")}, ["review_id"]),
    ]
    ops += [
        op("carts_get", "GET", "/carts/{cart_id}", "Gets a shopping cart with its items and totals.", {"cart_id": ident("cart")}, ["cart_id"]),
        op("carts_add_item", "POST", "/carts/{cart_id}/items", "Adds a product to a shopping cart, or raises its quantity.",
           {"cart_id": ident("cart"), "product_id": ident("product"), "quantity": {"type": "integer", "minimum": 1, "default": 1}},
           ["cart_id", "product_id"]),
        op("carts_remove_item", "DELETE", "/carts/{cart_id}/items/{product_id}", "Removes a product from a shopping cart.",
           {"cart_id": ident("cart"), "product_id": ident("product")}, ["cart_id", "product_id"]),
        op("carts_clear", "DELETE", "/carts/{cart_id}/items", "Empties a shopping cart of all its items.",
           {"cart_id": ident("cart")}, ["cart_id"]),
    ]
    subscription = {"subscription_id": ident("subscription")}
    ops += [
        op("subscriptions_list", "GET", "/subscriptions", "Lists recurring product subscriptions.",
           {"customer_id": prop(ID, "Only this customer's subscriptions."),
            "status": {"type": "string", "enum": ["active", "paused", "cancelled"]}, "limit": LIMIT, "cursor": CURSOR}),
        op("subscriptions_get", "GET", "/subscriptions/{subscription_id}", "Gets one subscription and its next billing date.",
           subscription, ["subscription_id"]),
        op("subscriptions_create", "POST", "/subscriptions", "Subscribes a customer to receive a product on a recurring schedule.",
           {"customer_id": ident("customer"), "product_id": ident("product"),
            "interval": {"type": "string", "enum": ["weekly", "monthly", "quarterly"]}, "start_on": DATE},
           ["customer_id", "product_id", "interval"]),
        op("subscriptions_pause", "POST", "/subscriptions/{subscription_id}/pause", "Pauses a subscription's billing and deliveries until a date.",
           {**subscription, "resume_on": prop(DATE, "When it resumes by itself.")}, ["subscription_id"]),
        op("subscriptions_resume", "POST", "/subscriptions/{subscription_id}/resume", "Resumes a paused subscription now.",
           subscription, ["subscription_id"]),
        op("subscriptions_cancel", "POST", "/subscriptions/{subscription_id}/cancel", "Cancels a subscription at the end of its current period.",
           subscription, ["subscription_id"]),
    ]
    ticket = {"ticket_id": ident("ticket")}
    ops += [
        op("tickets_list", "GET", "/tickets", "Lists customer support tickets.",
           {"status": {"type": "string", "enum": ["open", "pending", "closed"]},
            "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"]}, "limit": LIMIT, "cursor": CURSOR}),
        op("tickets_get", "GET", "/tickets/{ticket_id}", "Gets one support ticket with its conversation.", ticket, ["ticket_id"]),
        op("tickets_create", "POST", "/tickets", "Opens a support ticket on behalf of a customer.",
           {"customer_id": ident("customer"), "subject": {"type": "string", "maxLength": 200}, "body": {"type": "string"},
            "priority": {"type": "string", "enum": ["low", "normal", "high", "urgent"], "default": "normal"}},
           ["customer_id", "subject", "body"]),
        op("tickets_reply", "POST", "/tickets/{ticket_id}/replies", "Replies to a support ticket; the customer gets the reply by email.",
           {**ticket, "body": {"type": "string"}, "internal": prop({"type": "boolean", "default": False}, "A note for staff only.")},
           ["ticket_id", "body"]),
        op("tickets_close", "POST", "/tickets/{ticket_id}/close", "Closes a resolved support ticket.", ticket, ["ticket_id"]),
    ]
    ops += crud("employees", "employee", "/employees", {
        "name": prop({"type": "string"}, "The employee's full name."),
        "email": prop(EMAIL, "The employee's work email address."),
        "role": {"type": "string", "enum": ["admin", "support", "warehouse", "finance"]},
    }, ["name", "email", "role"], {"role": {"type": "string", "enum": ["admin", "support", "warehouse", "finance"]}},
        ["list", "get", "create", "update"], "staff accounts of the back office")
    ops.append(op("employees_deactivate", "POST", "/employees/{employee_id}/deactivate",
                  "Deactivates an employee's account and signs them out everywhere.", {"employee_id": ident("employee")}, ["employee_id"]))
    period = {"from": prop(DATE, "The first day of the period."), "to": prop(DATE, "The last day of the period.")}
    ops += [
        op("reports_sales_summary", "GET", "/reports/sales", "Reports revenue, order count and average order value over a period, by day, week or month.",
           {**period, "group_by": {"type": "string", "enum": ["day", "week", "month"]}}, ["from", "to"]),
        op("reports_top_products", "GET", "/reports/top-products", "Reports the best-selling products over a period by units or revenue.",
           {**period, "by": {"type": "string", "enum": ["units", "revenue"]}, "limit": LIMIT}, ["from", "to"]),
        op("reports_inventory_valuation", "GET", "/reports/inventory-valuation", "Reports the value of the stock on hand in each warehouse at cost.",
           {"warehouse_id": prop(ID, "Only this warehouse.")}),
    ]
    events = {"type": "array", "items": {"type": "string", "enum": ["order.created", "order.cancelled", "payment.captured", "refund.created", "shipment.delivered"]}}
    ops += [
        op("webhooks_list", "GET", "/webhooks", "Lists the webhook endpoints that receive the shop's events.", {}),
        op("webhooks_create", "POST", "/webhooks", "Registers a URL to receive the shop's events as signed HTTP POSTs.",
           {"url": {"type": "string", "format": "uri"}, "events": events}, ["url", "events"]),
        op("webhooks_delete", "DELETE", "/webhooks/{webhook_id}", "Deletes a webhook endpoint; its events stop being sent.",
           {"webhook_id": ident("webhook")}, ["webhook_id"]),
    ]
    ops += crud("tax_rates", "tax rate", "/tax-rates", {
        "country": prop({"type": "string", "pattern": "^[A-Z]{2}$"}, "ISO 3166-1 alpha-2 country code."),
        "region": prop({"type": "string"}, "A state or province, when the rate is regional."),
        "percentage": {"type": "number", "minimum": 0, "maximum": 100},
        "inclusive": prop({"type": "boolean"}, "Whether prices already include the tax."),
    }, ["country", "percentage"], {"country": prop({"type": "string"}, "Only this country's rates.")},
        ["list", "create", "update"], "sales tax rates")
    ops += [
        op("gift_cards_create", "POST", "/gift-cards", "Issues a gift card with a balance, optionally emailed to a recipient.",
           {"amount": MONEY, "currency": CURRENCY, "recipient_email": EMAIL}, ["amount", "currency"]),
        op("gift_cards_get", "GET", "/gift-cards/{gift_card_id}", "Gets a gift card's remaining balance and expiry date.",
           {"gift_card_id": ident("gift card")}, ["gift_card_id"]),
        op("gift_cards_disable", "POST", "/gift-cards/{gift_card_id}/disable", "Disables a lost or stolen gift card so its balance cannot be spent.",
           {"gift_card_id": ident("gift card")}, ["gift_card_id"]),
    ]
    return ops


def main():
    ops = operations()
    ids = [o["operationId"] for o in ops]
    assert len(ops) == 100, f"{len(ops)} operations, not 100"
    assert len(set(ids)) == len(ids), "operation ids repeat"
    api = {
        "info": {"title": "Shop back office", "version": "1.0.0",
                 "description": "An online shop's back-office API (a fixture: each operation becomes a mock tool)."},
        "operations": ops,
    }
    path = Path(__file__).with_name("api.json")
    path.write_text(json.dumps(api, indent=1) + "\n")
    print(f"wrote {path}: {len(ops)} operations")


if __name__ == "__main__":
    main()
