# A data-wrangling script of the kind a model writes: make a table, parse it, clean it,
# group it, summarize it, format a report. Deterministic (its own seeded generator), and the
# same text for every runner in the Python benchmark.
import csv
import io
import json
import random
import statistics
from collections import Counter, defaultdict
from datetime import date, timedelta

rng = random.Random(42)
regions = ["north", "south", "east", "west"]
products = ["tea", "coffee", "cake", "jam", "bread", "cheese"]
start = date(2026, 1, 1)

buffer = io.StringIO()
writer = csv.writer(buffer)
writer.writerow(["day", "region", "product", "units", "unit_price", "note"])
for i in range(2000):
    day = start + timedelta(days=rng.randrange(300))
    units = rng.randint(-2, 40)  # a few bad rows: returns recorded as negative units
    price = round(rng.uniform(1.5, 12.0), 2)
    note = rng.choice(["", "", "promo", "late", " PROMO "])
    writer.writerow([day.isoformat(), rng.choice(regions), rng.choice(products), units, price, note])

rows = []
rejected = 0
for row in csv.DictReader(io.StringIO(buffer.getvalue())):
    units = int(row["units"])
    if units <= 0:
        rejected += 1
        continue
    row["units"] = units
    row["revenue"] = units * float(row["unit_price"])
    row["month"] = row["day"][:7]
    row["note"] = row["note"].strip().lower()
    rows.append(row)

by_region = defaultdict(list)
by_month = defaultdict(float)
for row in rows:
    by_region[row["region"]].append(row["revenue"])
    by_month[row["month"]] += row["revenue"]

summary = {
    region: {"orders": len(values), "total": round(sum(values), 2),
             "mean": round(statistics.mean(values), 2), "median": round(statistics.median(values), 2)}
    for region, values in sorted(by_region.items())
}
best_month = max(by_month, key=by_month.get)
top_products = Counter(row["product"] for row in rows).most_common(3)
promo_share = sum(row["note"] == "promo" for row in rows) / len(rows)
report = [f"{len(rows)} orders kept, {rejected} rejected; best month {best_month}"]
report += [f"{region:>6}: {s['orders']:4d} orders, {s['total']:10.2f} total" for region, s in summary.items()]
print("\n".join(report))
print(json.dumps({"top": top_products, "promo_share": round(promo_share, 3)}))
