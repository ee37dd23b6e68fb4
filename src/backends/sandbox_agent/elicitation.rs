//! ACP `elicitation/create` ↔ ask-lsp's form prompt.
//!
//! Shapes mirrored from agentclientprotocol/agent-client-protocol at
//! b7f0005493b98de32fabee3e9540e2b64da68535
//! (`agent-client-protocol-schema/src/v1/elicitation.rs`,
//! `docs/protocol/v1/elicitation.mdx`): params are a scope (`sessionId` with
//! an optional `toolCallId`, or `requestId`), `mode` (`form` with a
//! restricted JSON Schema `requestedSchema`, or `url` with `elicitationId`
//! and `url`) and `message`; the result is `{"action": "accept", "content"?}`,
//! `{"action": "decline"}` or `{"action": "cancel"}`. The schema crate is not
//! used: it pulls in `derive_more`, `serde_with` and `schemars`, and it
//! accepts what ask-lsp must refuse with a reason (`$ref`, nested objects).
//! MCP's legacy `enumNames` is read too.

use serde_json::{Map, Value, json};

use crate::prompt::{
    Field, FieldKind, FieldOption, FieldValue, Form, FormValues, Link, Origin, TextFormat,
};

/// A request ask-lsp can show, or why not.
pub(in crate::backends) struct Elicitation {
    pub session: String,
    pub origin: Origin,
    pub form: Form,
    /// Url mode: the id `elicitation/complete` names.
    pub elicitation_id: Option<String>,
}

/// Why a request is refused: a decline the agent gets, with the reason shown
/// to the person; or, for a mode ACP does not define, JSON-RPC -32602.
#[derive(Debug, PartialEq)]
pub(in crate::backends) enum Refusal {
    Decline(String),
    InvalidParams(String),
}

/// The property names of `params.requestedSchema.properties` in the order
/// the agent wrote them (`serde_json::Value` keeps keys sorted): fields are
/// shown in the order received. (sandbox-agent 0.4.2 itself forwards the
/// request with sorted keys, so through it that order is alphabetical.)
pub(super) fn property_order(data: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Message {
        params: Params,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        #[serde(rename = "requestedSchema")]
        requested_schema: Schema,
    }
    #[derive(serde::Deserialize)]
    struct Schema {
        properties: Keys,
    }
    struct Keys(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Keys, A::Error> {
                    let mut keys = Vec::new();
                    // Past the field bound the form is refused: no more kept.
                    while let Some((key, _)) = map.next_entry::<String, serde::de::IgnoredAny>()? {
                        if keys.len() <= crate::prompt::limits::FIELDS {
                            keys.push(key);
                        }
                    }
                    Ok(Keys(keys))
                }
            }
            d.deserialize_map(Visit)
        }
    }
    serde_json::from_str::<Message>(data)
        .map(|m| m.params.requested_schema.properties.0)
        .unwrap_or_default()
}

/// Counts the JSON values in `data` without building any: an error once
/// there are more than `max` (or the text is not JSON).
pub(super) fn count_values(data: &str, max: usize) -> Result<(), serde_json::Error> {
    use serde::de::{DeserializeSeed, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use std::cell::Cell;

    #[derive(Clone, Copy)]
    struct Count<'c> {
        seen: &'c Cell<usize>,
        max: usize,
    }
    impl Count<'_> {
        fn tick<E: Error>(self) -> Result<(), E> {
            self.seen.set(self.seen.get() + 1);
            match self.seen.get() > self.max {
                true => Err(E::custom(format_args!(
                    "more than {} values in one message",
                    self.max
                ))),
                false => Ok(()),
            }
        }
    }
    impl<'de> DeserializeSeed<'de> for Count<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Count<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E: Error>(self, _: bool) -> Result<(), E> {
            self.tick()
        }
        fn visit_i64<E: Error>(self, _: i64) -> Result<(), E> {
            self.tick()
        }
        fn visit_u64<E: Error>(self, _: u64) -> Result<(), E> {
            self.tick()
        }
        fn visit_f64<E: Error>(self, _: f64) -> Result<(), E> {
            self.tick()
        }
        fn visit_str<E: Error>(self, _: &str) -> Result<(), E> {
            self.tick()
        }
        fn visit_unit<E: Error>(self) -> Result<(), E> {
            self.tick()
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            self.tick()?;
            while seq.next_element_seed(self)?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            self.tick()?;
            while map.next_key::<IgnoredAny>()?.is_some() {
                map.next_value_seed(self)?;
            }
            Ok(())
        }
    }
    let seen = Cell::new(0);
    let mut reader = serde_json::Deserializer::from_str(data);
    Count { seen: &seen, max }.deserialize(&mut reader)?;
    reader.end()
}

pub(in crate::backends) fn parse(params: &Value, order: &[String]) -> Result<Elicitation, Refusal> {
    let params = params
        .as_object()
        .ok_or_else(|| Refusal::InvalidParams("params are not an object".into()))?;
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    let (session, origin) = match (params.get("sessionId"), params.get("requestId")) {
        (Some(Value::String(session)), _) => (
            session.clone(),
            Origin {
                tool_call: text("toolCallId"),
                agent: None,
                session_title: None,
                requester: None,
            },
        ),
        // Request-scoped (outside a session): no session to name.
        (None, Some(_)) => (String::new(), Origin::default()),
        _ => {
            return Err(Refusal::InvalidParams(
                "no scope: neither sessionId nor requestId".into(),
            ));
        }
    };
    let message = text("message").unwrap_or_default();
    let (form, elicitation_id) = match params.get("mode").and_then(Value::as_str) {
        Some("form") => {
            let schema = params.get("requestedSchema").ok_or_else(|| {
                Refusal::InvalidParams("form mode without requestedSchema".into())
            })?;
            let mut fields = fields(schema).map_err(Refusal::Decline)?;
            fields.sort_by_key(|f| order.iter().position(|k| *k == f.id));
            (
                Form {
                    message,
                    fields,
                    url: None,
                    cannot_show: None,
                },
                None,
            )
        }
        Some("url") => {
            let (Some(url), Some(id)) = (text("url"), text("elicitationId")) else {
                return Err(Refusal::InvalidParams(
                    "url mode needs url and elicitationId".into(),
                ));
            };
            (
                Form {
                    message,
                    fields: Vec::new(),
                    url: Some(Link {
                        url,
                        domain: String::new(),
                    }),
                    cannot_show: None,
                },
                Some(id),
            )
        }
        Some(other) => {
            return Err(Refusal::InvalidParams(format!(
                "mode {:?} is not supported (form and url are)",
                // The agent reads it: English, whatever the person's language.
                crate::text::for_display_in_english(other, 40)
            )));
        }
        None => return Err(Refusal::InvalidParams("no mode".into())),
    };
    Ok(Elicitation {
        session,
        origin,
        form,
        elicitation_id,
    })
}

/// The restricted JSON Schema: a flat object of primitive properties.
fn fields(schema: &Value) -> Result<Vec<Field>, String> {
    let schema = schema
        .as_object()
        .ok_or("the requested schema is not an object")?;
    refs(schema, "the requested schema")?;
    match schema.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => return Err(format!("the requested schema has type {other}, not object")),
    }
    let required: Vec<&str> = match schema.get("required") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(ids)) => ids.iter().filter_map(Value::as_str).collect(),
        Some(_) => return Err("`required` is not a list of names".into()),
    };
    let empty = Map::new();
    let properties = match schema.get("properties") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(properties)) => properties,
        Some(_) => return Err("`properties` is not an object".into()),
    };
    // Bounded here too: a huge schema is refused before it is walked.
    if properties.len() > crate::prompt::limits::FIELDS {
        return Err(format!(
            "the form has {} fields (at most {})",
            properties.len(),
            crate::prompt::limits::FIELDS
        ));
    }
    properties
        .iter()
        .map(|(id, property)| {
            let shown = crate::text::for_display(id, 40);
            let property = property
                .as_object()
                .ok_or_else(|| format!("field {shown:?} is not a schema object"))?;
            refs(property, &format!("field {shown:?}"))?;
            Ok(Field {
                id: id.clone(),
                title: str_of(property, "title"),
                description: str_of(property, "description"),
                required: required.contains(&id.as_str()),
                kind: kind(property).map_err(|e| format!("field {shown:?} {e}"))?,
            })
        })
        .collect()
}

fn refs(schema: &Map<String, Value>, what: &str) -> Result<(), String> {
    for key in ["$ref", "$defs", "definitions", "allOf", "if", "not"] {
        if schema.contains_key(key) {
            return Err(format!(
                "{what} uses {key}, which forms do not support (flat fields only)"
            ));
        }
    }
    Ok(())
}

fn str_of(map: &Map<String, Value>, key: &str) -> String {
    map.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn u32_of(map: &Map<String, Value>, key: &str) -> Result<Option<u32>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("has a {key} that is not a small whole number")),
    }
}

fn f64_of(map: &Map<String, Value>, key: &str) -> Result<Option<f64>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("has a {key} that is not a number")),
    }
}

/// `[{const, title, description}]` (oneOf / anyOf) as options.
fn titled(list: &Value) -> Result<Vec<FieldOption>, String> {
    list.as_array()
        .ok_or("has options that are not a list")?
        .iter()
        .map(|option| match option.get("const") {
            Some(Value::String(value)) => Ok(FieldOption {
                value: value.clone(),
                label: option
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or(value)
                    .to_owned(),
                description: option
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }),
            _ => Err("has an option without a string const".to_owned()),
        })
        .collect()
}

/// `enum` (with MCP's legacy `enumNames` as labels) as options.
fn plain(values: &Value, names: Option<&Value>) -> Result<Vec<FieldOption>, String> {
    let values = values.as_array().ok_or("has an enum that is not a list")?;
    let names = names.and_then(Value::as_array);
    values
        .iter()
        .enumerate()
        .map(|(i, value)| match value {
            Value::String(value) => Ok(FieldOption {
                value: value.clone(),
                label: names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .unwrap_or(value)
                    .to_owned(),
                description: String::new(),
            }),
            _ => Err("has an enum value that is not a string".to_owned()),
        })
        .collect()
}

fn kind(p: &Map<String, Value>) -> Result<FieldKind, String> {
    let default = p.get("default");
    Ok(match p.get("type").and_then(Value::as_str) {
        Some("string") => {
            if let Some(one_of) = p.get("oneOf") {
                FieldKind::Choice {
                    options: titled(one_of)?,
                    default: default.and_then(Value::as_str).map(str::to_owned),
                }
            } else if let Some(values) = p.get("enum") {
                FieldKind::Choice {
                    options: plain(values, p.get("enumNames"))?,
                    default: default.and_then(Value::as_str).map(str::to_owned),
                }
            } else {
                FieldKind::Text {
                    format: match p.get("format").and_then(Value::as_str) {
                        None => None,
                        Some(name) if let Some(format) = TextFormat::from_name(name) => {
                            Some(format)
                        }
                        Some(other) => {
                            return Err(format!(
                                "has format {:?}, which forms do not support",
                                crate::text::for_display(other, 40)
                            ));
                        }
                    },
                    pattern: p.get("pattern").and_then(Value::as_str).map(str::to_owned),
                    min_length: u32_of(p, "minLength")?,
                    max_length: u32_of(p, "maxLength")?,
                    default: default.and_then(Value::as_str).map(str::to_owned),
                }
            }
        }
        Some(t @ ("number" | "integer")) => FieldKind::Number {
            integer: t == "integer",
            minimum: f64_of(p, "minimum")?,
            maximum: f64_of(p, "maximum")?,
            default: default.and_then(Value::as_f64),
        },
        Some("boolean") => FieldKind::Boolean {
            default: default.and_then(Value::as_bool),
        },
        Some("array") => {
            let items = p
                .get("items")
                .and_then(Value::as_object)
                .ok_or("is a list without item choices")?;
            refs(items, "its items")?;
            let options = if let Some(any_of) = items.get("anyOf").or_else(|| items.get("oneOf")) {
                titled(any_of)?
            } else if let Some(values) = items.get("enum") {
                plain(values, items.get("enumNames"))?
            } else {
                return Err("is a list of free values or objects, which forms do not support (lists of choices only)".into());
            };
            FieldKind::Multi {
                options,
                min_items: u32_of(p, "minItems")?,
                max_items: u32_of(p, "maxItems")?,
                default: default.and_then(Value::as_array).map(|values| {
                    values
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                }),
            }
        }
        Some("object") => {
            return Err("is a nested object, which forms do not support (flat fields only)".into());
        }
        Some(other) => {
            return Err(format!(
                "has type {:?}, which forms do not support",
                crate::text::for_display(other, 40)
            ));
        }
        None => return Err("has no type".into()),
    })
}

/// The `accept` result: content by field id, numbers as the schema typed them.
pub(in crate::backends) fn accept(form: &Form, values: &FormValues) -> Value {
    if form.url.is_some() {
        return json!({"action": "accept"});
    }
    let content: Map<String, Value> = values
        .iter()
        .map(|(id, value)| {
            let integer = form
                .fields
                .iter()
                .any(|f| &f.id == id && matches!(f.kind, FieldKind::Number { integer: true, .. }));
            let value = match value {
                FieldValue::Number(n) if integer => json!(*n as i64),
                FieldValue::Number(n) => json!(n),
                FieldValue::Text(s) | FieldValue::Choice(s) => json!(s),
                FieldValue::Bool(b) => json!(b),
                FieldValue::Choices(values) => json!(values),
            };
            (id.clone(), value)
        })
        .collect();
    json!({"action": "accept", "content": content})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decline(schema: Value) -> String {
        match parse(
            &json!({"sessionId": "s", "mode": "form", "message": "m", "requestedSchema": schema}),
            &[],
        ) {
            Err(Refusal::Decline(reason)) => reason,
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("accepted {schema}"),
        }
    }

    #[test]
    fn schemas_outside_the_subset_are_declined_with_a_reason() {
        assert_eq!(
            decline(
                json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}})
            ),
            "field \"a\" is a nested object, which forms do not support (flat fields only)"
        );
        assert_eq!(
            decline(json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}})),
            "field \"a\" uses $ref, which forms do not support (flat fields only)"
        );
        assert_eq!(
            decline(json!({"type": "object", "properties": {"a": {"type": "tuple"}}})),
            "field \"a\" has type \"tuple\", which forms do not support"
        );
        assert_eq!(
            decline(
                json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}})
            ),
            "field \"a\" is a list of free values or objects, which forms do not support (lists of choices only)"
        );
        assert_eq!(
            decline(
                json!({"type": "object", "properties": {"a": {"type": "string", "format": "ipv4"}}})
            ),
            "field \"a\" has format \"ipv4\", which forms do not support"
        );
    }

    #[test]
    fn fields_keep_the_agents_order() {
        let data = r#"{"params": {"sessionId": "s", "mode": "form", "message": "m", "requestedSchema":
            {"type": "object", "properties": {"zeta": {"type": "boolean"}, "alpha": {"type": "boolean"}}}}}"#;
        let order = property_order(data);
        assert_eq!(order, ["zeta", "alpha"]);
        let message: Value = serde_json::from_str(data).unwrap();
        let Ok(e) = parse(&message["params"], &order) else {
            panic!()
        };
        let ids: Vec<&str> = e.form.fields.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["zeta", "alpha"]);
    }

    #[test]
    fn scopes_and_modes() {
        let e = parse(
            &json!({"sessionId": "s", "toolCallId": "t", "mode": "url",
            "elicitationId": "e1", "url": "https://a.example/x", "message": "Sign in"}),
            &[],
        )
        .ok()
        .unwrap();
        assert_eq!(e.session, "s");
        assert_eq!(e.origin.tool_call.as_deref(), Some("t"));
        assert_eq!(e.elicitation_id.as_deref(), Some("e1"));
        let e = parse(
            &json!({"requestId": 12, "mode": "form", "message": "m",
            "requestedSchema": {"type": "object", "properties": {}}}),
            &[],
        )
        .ok()
        .unwrap();
        assert_eq!(e.session, "");
        assert_eq!(
            parse(
                &json!({"sessionId": "s", "mode": "voice", "message": "m"}),
                &[]
            )
            .err(),
            Some(Refusal::InvalidParams(
                "mode \"voice\" is not supported (form and url are)".into()
            ))
        );
        assert_eq!(
            parse(&json!({"mode": "form", "message": "m"}), &[]).err(),
            Some(Refusal::InvalidParams(
                "no scope: neither sessionId nor requestId".into()
            ))
        );
    }
}
