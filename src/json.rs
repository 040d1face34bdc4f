//! JSON for files that people read and that hold long lists of numbers (device profiles):
//! objects one key a line as `serde_json`'s pretty printer writes them, but an array whose first
//! element is a plain value (number, string, bool, null) on one line. A profile's learned models
//! (thousands of tree nodes and training points) then take a few times less room than
//! pretty-printed, and every key still stands on its own line.
//!
//! ```
//! let v = serde_json::json!({"name": "gb", "v": [1.5, 2.0], "trees": [{"f": [0, 1]}]});
//! let s = sparsecast::json::to_string(&v).unwrap();
//! assert_eq!(s, "{\n  \"name\": \"gb\",\n  \"trees\": [\n    {\n      \"f\": [0,1]\n    }\n  ],\n  \"v\": [1.5,2.0]\n}");
//! assert_eq!(serde_json::from_str::<serde_json::Value>(&s).unwrap(), v);
//! ```

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};
use std::io::{self, Write};

/// An open container.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    Object {
        keys: bool,
    },
    /// An array: `compact` once its first element decided; the element about to be written
    /// (`Some(first)`) until it is.
    Array {
        compact: Option<bool>,
        pending: Option<bool>,
        values: bool,
    },
}

/// The formatter (see the module documentation).
#[derive(Default)]
struct Readable {
    stack: Vec<Open>,
}

impl Readable {
    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.stack.len() {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Called before every value: writes the separator an array element needs.
    fn before<W: ?Sized + Write>(&mut self, w: &mut W, plain: bool) -> io::Result<()> {
        let Some(Open::Array {
            compact,
            pending: Some(first),
            values,
        }) = self.stack.last().copied()
        else {
            return Ok(());
        };
        let compact = compact.unwrap_or(plain);
        *self.stack.last_mut().expect("an open array") = Open::Array {
            compact: Some(compact),
            pending: None,
            values,
        };
        if !first {
            w.write_all(b",")?;
        }
        if !compact {
            self.indent(w)?;
        }
        Ok(())
    }
}

macro_rules! plain {
    ($($name:ident: $t:ty),*) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W, v: $t) -> io::Result<()> {
            self.before(w, true)?;
            CompactFormatter.$name(w, v)
        }
    )*};
}

impl Formatter for Readable {
    plain!(write_bool: bool, write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64,
        write_i128: i128, write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64,
        write_u128: u128, write_f32: f32, write_f64: f64, write_number_str: &str,
        write_raw_fragment: &str);

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before(w, true)?;
        w.write_all(b"null")
    }
    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before(w, true)?;
        w.write_all(b"\"")
    }
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before(w, false)?;
        self.stack.push(Open::Array {
            compact: None,
            pending: None,
            values: false,
        });
        w.write_all(b"[")
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        if let Some(Open::Array {
            pending, values, ..
        }) = self.stack.last_mut()
        {
            *pending = Some(first);
            *values = true;
        }
        Ok(())
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(Open::Array {
            compact, values, ..
        }) = self.stack.pop()
        {
            if values && compact == Some(false) {
                self.indent(w)?;
            }
        }
        w.write_all(b"]")
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.before(w, false)?;
        self.stack.push(Open::Object { keys: false });
        w.write_all(b"{")
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if let Some(Open::Object { keys }) = self.stack.last_mut() {
            *keys = true;
        }
        if !first {
            w.write_all(b",")?;
        }
        self.indent(w)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(Open::Object { keys: true }) = self.stack.pop() {
            self.indent(w)?;
        }
        w.write_all(b"}")
    }
}

/// Write `value` readably (see the module documentation).
pub fn to_writer<W: Write, T: Serialize + ?Sized>(w: W, value: &T) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, Readable::default());
    value.serialize(&mut ser)
}

/// `value` as readable JSON text.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    to_writer(&mut out, value)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}
