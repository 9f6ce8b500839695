//! The attributes of `toolcell-guest`. Use them through that crate: `toolcell_guest::tool`
//! and `toolcell_guest::json`.
//!
//! (Over 500 lines: both attributes share one reading of a function and its docs.)

#![deny(clippy::unwrap_used, clippy::expect_used)]

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    Attribute, Error, Expr, FnArg, Ident, ItemFn, Lit, LitBool, LitStr, Meta, Pat, ReturnType, Token, Type,
    parse_macro_input,
};

/// The longest description model providers accept for a tool.
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest title toolcell hosts accept.
const MAX_TITLE_CHARS: usize = 128;

/// Turns a plain function into a toolcell tool.
///
/// - The function's doc comment becomes the description (required, at most 1024
///   characters); each parameter's doc comment becomes that property's description.
/// - The name is the function's name, or `#[tool(name = "...")]`; it must match
///   `^[a-zA-Z0-9_-]{1,64}$`. The version is the crate's `CARGO_PKG_VERSION`.
/// - Parameters may be of any owned `Deserialize + JsonSchema` type. `Option<T>` parameters
///   are optional; all others are required. Unknown fields are rejected. `#[schemars(...)]`
///   and `#[serde(...)]` attributes on parameters apply to the schema and parsing.
/// - A parameter of type `Context` receives the call id and host context and is not part of
///   the schema.
/// - The return type is `Result<T, E>` with `E: Into<ToolError>`, or a plain `T`, where
///   `T: Serialize`. `#[tool(output_schema)]` also declares `T`'s JSON Schema (then `T` must
///   implement `JsonSchema`), and the host rejects results that do not match it.
/// - `http = ["api.example.com", "*.example.org"]`, `dirs = ["/workspace"]`,
///   `writable_dirs = ["/out"]` and `env = ["API_KEY"]` declare the capabilities the tool
///   requests. Requests grant nothing: the operator's policy does; tooling shows both.
/// - `title = "Calculator"` gives the tool a short name for people (non-empty, at most 128
///   characters, one line), shown by clients such as MCP's `tools/list`.
/// - `read_only`, `destructive`, `idempotent` and `open_world` declare MCP's behaviour hints
///   (`readOnlyHint`, ...); each also takes `= true` or `= false`, and an option left out
///   leaves that hint unsaid. `read_only` with `destructive` is a compile error. Unsaid,
///   `open_world` is derived by the host: true when the tool requests `http` hosts.
///
/// Generates a unit struct named after the function in PascalCase plus `Tool`
/// (`fn json_query` -> `JsonQueryTool`) implementing `toolcell_guest::Tool`, and exports it
/// when compiling for WebAssembly. One `#[tool]` per crate. Natively (in the crate's tests),
/// the generated `invoke` checks the arguments against the parameters schema, and the result
/// against a declared output schema, as the host does, with the host's messages.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut options = ToolOptions::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            options.name = Some(meta.value()?.parse()?);
            Ok(())
        } else if meta.path.is_ident("output_schema") {
            options.output_schema = true;
            Ok(())
        } else if meta.path.is_ident("http") {
            options.http = string_list(&meta.value()?.parse()?, "a host pattern such as \"api.example.com\"")?;
            Ok(())
        } else if meta.path.is_ident("dirs") {
            options.dirs = guest_paths(&meta.value()?.parse()?)?;
            Ok(())
        } else if meta.path.is_ident("writable_dirs") {
            options.writable_dirs = guest_paths(&meta.value()?.parse()?)?;
            Ok(())
        } else if meta.path.is_ident("env") {
            options.env = string_list(&meta.value()?.parse()?, "an environment variable name such as \"API_KEY\"")?;
            Ok(())
        } else if meta.path.is_ident("title") {
            options.title = Some(meta.value()?.parse()?);
            Ok(())
        } else if let Some(hint) = HINTS.iter().position(|hint| meta.path.is_ident(hint)) {
            // A bare flag means `= true`.
            let value = if meta.input.peek(Token![=]) {
                meta.value()?.parse::<LitBool>().map_err(|err| {
                    Error::new(
                        err.span(),
                        format!("`{}` takes `= true` or `= false`, or stands alone for true", HINTS[hint]),
                    )
                })?
            } else {
                LitBool::new(true, meta.path.span())
            };
            options.hints[hint] = Some(value);
            Ok(())
        } else {
            Err(meta.error(
                "unknown `tool` option; expected `name = \"...\"`, `title = \"...\"`, `output_schema`, \
                 `read_only`, `destructive`, `idempotent`, `open_world`, `http = [...]`, `dirs = [...]`, \
                 `writable_dirs = [...]` or `env = [...]`",
            ))
        }
    });
    let function = parse_macro_input!(item as ItemFn);
    let expanded = syn::parse::Parser::parse(parser, attr).and_then(|()| expand_tool(options, function.clone()));
    match expanded {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            // The function as written next to the error, so that its imports and its callers
            // add no warnings or errors of their own ("unused import", "cannot find function").
            let error = error.into_compile_error();
            let function = without_parameter_attributes(function);
            quote!(#error #[allow(dead_code)] #function).into()
        }
    }
}

/// `function` without the attributes of its parameters (doc comments, `#[schemars]`), which
/// Rust does not allow there.
fn without_parameter_attributes(mut function: ItemFn) -> ItemFn {
    for input in &mut function.sig.inputs {
        if let FnArg::Typed(typed) = input {
            typed.attrs.clear();
        }
    }
    function
}

/// Derives `Serialize`, `Deserialize` and `JsonSchema` for a type used in a tool's
/// arguments or result, through `toolcell_guest` (so the tool crate needs no direct serde or
/// schemars dependency), plus `Debug` and `Clone`. Structs with named fields and enums also
/// reject unknown fields.
#[proc_macro_attribute]
pub fn json(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        let attr = TokenStream2::from(attr);
        return Error::new_spanned(attr, "`json` takes no options").into_compile_error().into();
    }
    let item = parse_macro_input!(item as syn::Item);
    let deny_unknown = match &item {
        syn::Item::Struct(item) if matches!(item.fields, syn::Fields::Named(_)) => {
            quote!(#[serde(deny_unknown_fields)])
        }
        syn::Item::Enum(_) => quote!(#[serde(deny_unknown_fields)]),
        syn::Item::Struct(_) => quote!(),
        other => {
            return Error::new_spanned(other, "`json` applies to a struct or an enum").into_compile_error().into();
        }
    };
    quote! {
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            ::toolcell_guest::__private::serde::Serialize,
            ::toolcell_guest::__private::serde::Deserialize,
            ::toolcell_guest::__private::schemars::JsonSchema,
        )]
        #[serde(crate = "::toolcell_guest::__private::serde")]
        #[schemars(crate = "::toolcell_guest::__private::schemars")]
        #deny_unknown
        #item
    }
    .into()
}

/// The behaviour hints, in the order of `ToolOptions::hints` and the WIT record.
const HINTS: [&str; 4] = ["read_only", "destructive", "idempotent", "open_world"];

#[derive(Default)]
struct ToolOptions {
    name: Option<LitStr>,
    title: Option<LitStr>,
    /// One per [`HINTS`] entry; `None` when the attribute does not mention it.
    hints: [Option<LitBool>; 4],
    output_schema: bool,
    http: Vec<LitStr>,
    dirs: Vec<LitStr>,
    writable_dirs: Vec<LitStr>,
    env: Vec<LitStr>,
}

/// `["a", "b"]`: non-empty string literals.
fn string_list(array: &syn::ExprArray, what: &str) -> syn::Result<Vec<LitStr>> {
    array
        .elems
        .iter()
        .map(|element| match element {
            Expr::Lit(syn::ExprLit { lit: Lit::Str(lit), .. }) if !lit.value().trim().is_empty() => Ok(lit.clone()),
            other => Err(Error::new_spanned(other, format!("expected {what}"))),
        })
        .collect()
}

/// Absolute guest paths such as `"/workspace"`.
fn guest_paths(array: &syn::ExprArray) -> syn::Result<Vec<LitStr>> {
    let paths = string_list(array, "an absolute guest path such as \"/workspace\"")?;
    for path in &paths {
        if !path.value().starts_with('/') {
            return Err(Error::new_spanned(path, "a guest path must be absolute, such as \"/workspace\""));
        }
    }
    Ok(paths)
}

/// One parameter of the tool function, as it appears in the arguments struct.
struct Parameter {
    ident: Ident,
    ty: Type,
    attrs: Vec<Attribute>,
}

fn expand_tool(options: ToolOptions, mut function: ItemFn) -> syn::Result<TokenStream2> {
    check_signature(&function)?;

    let fn_ident = function.sig.ident.clone();
    let (name, name_span) = match &options.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (fn_ident.to_string(), fn_ident.span()),
    };
    check_name(&name, name_span)?;
    let description = doc_text(&function.attrs).ok_or_else(|| {
        Error::new(
            fn_ident.span(),
            "a tool needs a doc comment: it becomes the description the model reads to decide when to call the tool",
        )
    })?;
    let description_chars = description.chars().count();
    if description_chars > MAX_DESCRIPTION_CHARS {
        return Err(Error::new(
            fn_ident.span(),
            format!(
                "the tool's description (its doc comment) is {description_chars} characters; model providers accept at most {MAX_DESCRIPTION_CHARS}: shorten it"
            ),
        ));
    }

    // Split the parameters into the schema's properties and the context, then strip the
    // attributes Rust does not allow on function parameters from the emitted function.
    let mut parameters = Vec::new();
    let mut call_arguments = Vec::new();
    let mut context_seen: Option<Span> = None;
    let mut warnings = Vec::new();
    for input in &mut function.sig.inputs {
        let FnArg::Typed(typed) = input else { unreachable!("receivers are rejected by check_signature") };
        let mut attrs = std::mem::take(&mut typed.attrs);
        // One doc attribute with wrapped lines joined, so the property description reads as
        // prose rather than carrying the source's line breaks.
        if let Some(doc) = doc_text(&attrs) {
            attrs.retain(|attr| !attr.path().is_ident("doc"));
            attrs.insert(0, syn::parse_quote!(#[doc = #doc]));
        }
        if is_context(&typed.ty) {
            if context_seen.is_some() {
                return Err(Error::new_spanned(&typed.ty, "a tool takes at most one `Context` parameter"));
            }
            context_seen = Some(typed.ty.span());
            call_arguments.push(quote!(context));
            continue;
        }
        let ident = match &*typed.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
            other => {
                return Err(Error::new_spanned(
                    other,
                    "tool parameters must be plain names: the name becomes the argument's property name",
                ));
            }
        };
        if !attrs.iter().any(|attr| attr.path().is_ident("doc")) {
            warnings.push(undocumented_parameter_warning(&ident));
        }
        call_arguments.push(quote!(arguments.#ident));
        parameters.push(Parameter { ident, ty: (*typed.ty).clone(), attrs });
    }

    let vis = &function.vis;
    let tool_struct = format_ident!("{}Tool", pascal_case(&fn_ident.to_string()), span = fn_ident.span());
    let arguments_struct = format_ident!("__{}Arguments", tool_struct);
    // Bounds on the arguments struct, which its derived impls copy: a parameter type without
    // `#[json]` fails here, at the parameter, with the SDK's message, and the derived code
    // (which assumes the bound) adds no errors of its own.
    let bounds = parameters
        .iter()
        .map(|Parameter { ty, .. }| quote_spanned!(ty.span()=> #ty: ::toolcell_guest::__private::Parameter));
    let fields = parameters.iter().map(|Parameter { ident, ty, attrs }| {
        let default = is_option(ty).then(|| quote!(#[serde(default)]));
        quote!(#(#attrs)* #default #ident: <#ty as ::toolcell_guest::__private::Parameter>::Checked)
    });

    let (returns_result, ok_type) = match &function.sig.output {
        ReturnType::Default => (false, syn::parse_quote!(())),
        ReturnType::Type(_, ty) => match result_ok_type(ty) {
            Some(ok) => (true, ok),
            None => (false, (**ty).clone()),
        },
    };
    let result = if returns_result {
        quote!(#fn_ident(#(#call_arguments),*).map_err(::core::convert::Into::<::toolcell_guest::ToolError>::into))
    } else {
        quote!(::core::result::Result::<_, ::toolcell_guest::ToolError>::Ok(#fn_ident(#(#call_arguments),*)))
    };
    let output_schema = if options.output_schema {
        quote!(::core::option::Option::Some(<#ok_type as ::toolcell_guest::__private::DescribedOutput>::output_schema()))
    } else {
        quote!(::core::option::Option::None)
    };
    let output_bound = if options.output_schema {
        quote_spanned!(ok_type.span()=> #ok_type: ::toolcell_guest::__private::DescribedOutput)
    } else {
        quote_spanned!(ok_type.span()=> #ok_type: ::toolcell_guest::__private::Output)
    };
    let context_unused = context_seen.is_none().then(|| quote!(let _ = &context;));
    let capabilities = requested_capabilities(&options);
    let annotations = declared_annotations(&options)?;
    let struct_doc = format!("The `{name}` tool, generated by `#[tool]` from `fn {fn_ident}`.");
    // A second `#[tool]` in the same module defines this again: rustc's "defined multiple
    // times" error then names the rule and points at the second tool. (In another module, the
    // component's exports clash when it is built for wasm32.)
    let one_tool_per_crate = quote_spanned! {fn_ident.span()=>
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        struct only_one_tool_per_crate__put_each_tool_in_its_own_crate;
    };

    Ok(quote! {
        // A tool's parameters are its schema's properties: many of them is normal.
        #[allow(clippy::too_many_arguments)]
        #function

        #one_tool_per_crate

        #(#warnings)*

        #[doc = #struct_doc]
        #[derive(Debug, Clone, Copy, Default)]
        #[allow(dead_code)] // used only by the wasm export when the function is private
        #vis struct #tool_struct;

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[derive(::toolcell_guest::__private::serde::Deserialize, ::toolcell_guest::__private::schemars::JsonSchema)]
        #[serde(crate = "::toolcell_guest::__private::serde", deny_unknown_fields)]
        #[schemars(crate = "::toolcell_guest::__private::schemars")]
        struct #arguments_struct where #(#bounds,)* {
            #(#fields,)*
        }

        impl ::toolcell_guest::Tool for #tool_struct where #output_bound {
            fn metadata() -> ::toolcell_guest::Metadata {
                ::toolcell_guest::Metadata {
                    name: ::std::string::String::from(#name),
                    description: ::std::string::String::from(#description),
                    version: ::std::string::String::from(::core::env!("CARGO_PKG_VERSION")),
                    parameters_schema: ::toolcell_guest::__private::parameters_schema::<#arguments_struct>(),
                    output_schema: #output_schema,
                }
            }

            fn invoke(
                arguments: &str,
                context: ::toolcell_guest::Context,
            ) -> ::core::result::Result<::std::string::String, ::toolcell_guest::ToolError> {
                #context_unused
                let arguments: #arguments_struct = ::toolcell_guest::__private::parse_arguments::<Self, #arguments_struct>(arguments)?;
                ::toolcell_guest::__private::to_output::<Self, _>(#result)
            }

            #capabilities

            #annotations
        }

        ::toolcell_guest::export!(#tool_struct);
    })
}

/// A warning at `parameter` that it has no doc comment. Stable Rust lets a macro warn only
/// through a lint, so this uses a deprecated item whose note is the message.
fn undocumented_parameter_warning(parameter: &Ident) -> TokenStream2 {
    let note = format!(
        "the tool parameter `{parameter}` has no doc comment, so the model sees no description of it: \
         add a `///` comment above it saying what to pass"
    );
    quote_spanned! {parameter.span()=>
        const _: () = {
            #[deprecated(note = #note)]
            #[allow(non_camel_case_types)]
            struct undocumented_parameter;
            let _ = undocumented_parameter;
        };
    }
}

/// `Tool::capabilities`, when the attribute requests any.
fn requested_capabilities(options: &ToolOptions) -> Option<TokenStream2> {
    let ToolOptions { http, dirs, writable_dirs, env, .. } = options;
    if http.is_empty() && dirs.is_empty() && writable_dirs.is_empty() && env.is_empty() {
        return None;
    }
    let directory = |path: &LitStr, writable: bool| quote!(::toolcell_guest::RequestedDirectory { guest_path: ::std::string::String::from(#path), writable: #writable });
    let directories =
        dirs.iter().map(|path| directory(path, false)).chain(writable_dirs.iter().map(|path| directory(path, true)));
    Some(quote! {
        fn capabilities() -> ::toolcell_guest::Capabilities {
            ::toolcell_guest::Capabilities {
                http_hosts: ::std::vec![#(::std::string::String::from(#http)),*],
                directories: ::std::vec![#(#directories),*],
                env: ::std::vec![#(::std::string::String::from(#env)),*],
            }
        }
    })
}

/// `Tool::annotations`, when the attribute declares a title or a hint.
fn declared_annotations(options: &ToolOptions) -> syn::Result<Option<TokenStream2>> {
    let ToolOptions { title, hints, .. } = options;
    if title.is_none() && hints.iter().all(Option::is_none) {
        return Ok(None);
    }
    let title = match title {
        Some(lit) => {
            let title = check_title(lit)?;
            quote!(::core::option::Option::Some(::std::string::String::from(#title)))
        }
        None => quote!(::core::option::Option::None),
    };
    let [read_only, destructive, idempotent, open_world] = hints;
    if let (Some(read_only), Some(destructive)) = (read_only, destructive)
        && read_only.value
        && destructive.value
    {
        return Err(Error::new(
            destructive.span(),
            "a tool cannot be both `read_only` and `destructive`: a read-only tool changes nothing; keep the one that is true",
        ));
    }
    let hint = |value: &Option<LitBool>| match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
    let (read_only, destructive, idempotent, open_world) =
        (hint(read_only), hint(destructive), hint(idempotent), hint(open_world));
    Ok(Some(quote! {
        fn annotations() -> ::toolcell_guest::Annotations {
            ::toolcell_guest::Annotations {
                title: #title,
                read_only: #read_only,
                destructive: #destructive,
                idempotent: #idempotent,
                open_world: #open_world,
            }
        }
    }))
}

/// The title, trimmed, if the host will accept it: non-empty, at most [`MAX_TITLE_CHARS`]
/// characters, no control characters.
fn check_title(lit: &LitStr) -> syn::Result<String> {
    let value = lit.value();
    let title = value.trim();
    if title.is_empty() {
        return Err(Error::new_spanned(
            lit,
            "the tool's title is empty: give it a short name for people, such as \"Calculator\", or remove `title`",
        ));
    }
    let chars = title.chars().count();
    if chars > MAX_TITLE_CHARS {
        return Err(Error::new_spanned(
            lit,
            format!(
                "the tool's title is {chars} characters; at most {MAX_TITLE_CHARS} are allowed: shorten it (the doc comment is the place for detail)"
            ),
        ));
    }
    if let Some(control) = title.chars().find(|c| c.is_control()) {
        return Err(Error::new_spanned(
            lit,
            format!(
                "the tool's title contains the control character U+{:04X}: a title is one line of plain text; remove it",
                u32::from(control)
            ),
        ));
    }
    Ok(title.to_owned())
}

/// Rejects signatures a tool cannot have, each at the offending token.
fn check_signature(function: &ItemFn) -> syn::Result<()> {
    let sig = &function.sig;
    if let Some(asyncness) = &sig.asyncness {
        return Err(Error::new_spanned(
            asyncness,
            "a tool cannot be `async`: each call runs to completion in its own instance; make it a plain `fn`",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(Error::new_spanned(
            &sig.generics,
            "a tool cannot be generic: its schema is derived from concrete parameter types",
        ));
    }
    if let Some(unsafety) = &sig.unsafety {
        return Err(Error::new_spanned(unsafety, "a tool cannot be `unsafe fn`"));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(Error::new_spanned(variadic, "a tool cannot be variadic"));
    }
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => {
                return Err(Error::new_spanned(
                    receiver,
                    "a tool is a free function, not a method: remove `self` (a tool keeps no state between calls)",
                ));
            }
            FnArg::Typed(typed) => match &*typed.ty {
                Type::Reference(reference) => {
                    return Err(Error::new_spanned(
                        reference,
                        "tool parameters must be owned: take `String` instead of `&str`, `Vec<T>` instead of `&[T]`",
                    ));
                }
                Type::ImplTrait(impl_trait) => {
                    return Err(Error::new_spanned(
                        impl_trait,
                        "a tool cannot take `impl Trait`: its schema is derived from concrete parameter types",
                    ));
                }
                _ => {}
            },
        }
    }
    Ok(())
}

fn check_name(name: &str, span: Span) -> syn::Result<()> {
    let valid_chars = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if name.is_empty() || name.len() > 64 || !valid_chars {
        return Err(Error::new(
            span,
            format!("tool name `{name}` is invalid: use 1-64 characters from a-z, A-Z, 0-9, `_` and `-`"),
        ));
    }
    Ok(())
}

/// The text of the `///` comments among `attrs`, with the single space after `///` removed.
fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(expr) => match &expr.lit {
                    Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .flat_map(|text| text.split('\n').map(str::to_owned).collect::<Vec<_>>())
        .map(|line| line.strip_prefix(' ').unwrap_or(&line).trim_end().to_owned())
        .collect();
    let text = join_wrapped_lines(&lines).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Joins lines wrapped within a paragraph with spaces, keeping blank lines between paragraphs
/// and line breaks before list items and indented lines.
fn join_wrapped_lines(lines: &[String]) -> String {
    let mut text = String::new();
    let mut previous_blank = true;
    for line in lines {
        let trimmed = line.trim_start();
        let blank = trimmed.is_empty();
        let starts_block = trimmed.starts_with(['-', '*', '|', '#'])
            || trimmed.split_once(". ").is_some_and(|(number, _)| number.chars().all(|c| c.is_ascii_digit()))
            || line.starts_with("  ");
        if !text.is_empty() {
            text.push(if blank || previous_blank || starts_block { '\n' } else { ' ' });
        }
        text.push_str(if starts_block { line } else { trimmed });
        previous_blank = blank;
    }
    text
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        _ => None,
    }
}

fn is_context(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident == "Context" && segment.arguments.is_empty())
}

fn is_option(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident == "Option")
}

/// `T` when `ty` is written `Result<T, ...>` (any path ending in `Result`).
fn result_ok_type(ty: &Type) -> Option<Type> {
    let segment = last_segment(ty)?;
    if segment.ident != "Result" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(arguments) = &segment.arguments else { return None };
    arguments.args.iter().find_map(|argument| match argument {
        syn::GenericArgument::Type(ty) => Some(ty.clone()),
        _ => None,
    })
}

fn pascal_case(snake: &str) -> String {
    snake
        .split(['_', '-'])
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}
