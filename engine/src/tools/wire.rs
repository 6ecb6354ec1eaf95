//! Pieces the tools' typed result documents share: a boolean that is
//! always the same value on the wire ([`Flag`], the `"success": true` /
//! `"success": false` that tells a document's shapes apart, and that the
//! schema states as a `const`).

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Serialize, Serializer};
use serde_json::Value;

/// A typed result document as the wire carries it. Serializing these types
/// cannot fail (string keys, no floats, no fallible `Serialize` impls), so
/// the `Null` fallback is never taken; it stands in for an `expect` the
/// engine does not allow itself.
pub fn document<T: Serialize>(doc: &T) -> Value {
    serde_json::to_value(doc).unwrap_or(Value::Null)
}

/// A JSON boolean that is always `V`: serialized as `true`/`false`, its
/// schema `{"type": "boolean", "const": V}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flag<const V: bool>;

/// `"success": true`.
pub type Succeeded = Flag<true>;
/// `"success": false`.
pub type Failed = Flag<false>;

impl<const V: bool> Serialize for Flag<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(V)
    }
}

impl<const V: bool> JsonSchema for Flag<V> {
    fn schema_name() -> Cow<'static, str> {
        if V {
            "True".into()
        } else {
            "False".into()
        }
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "boolean", "const": V})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_is_its_value_and_says_so() {
        assert_eq!(
            serde_json::to_string(&Succeeded::default()).ok().as_deref(),
            Some("true")
        );
        assert_eq!(
            serde_json::to_string(&Failed::default()).ok().as_deref(),
            Some("false")
        );
        let schema = crate::schema::schema_of::<Failed>();
        assert_eq!(schema.get("const"), Some(&serde_json::Value::Bool(false)));
    }
}
