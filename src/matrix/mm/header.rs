//! The banner line and the size line.

use super::lex::{self, BadIndex};
use super::{Field, Layout, Symmetry};
use crate::{Error, Result};

/// The banner every file must start with, as shown in error messages.
const BANNER_HELP: &str = "%%MatrixMarket matrix coordinate|array real|integer|pattern \
                           general|symmetric|skew-symmetric";

/// Everything before the data lines.
#[derive(Clone, Debug)]
pub struct Header {
    /// Storage layout.
    pub layout: Layout,
    /// Value field.
    pub field: Field,
    /// Symmetry.
    pub symmetry: Symmetry,
    /// Declared rows.
    pub nrows: usize,
    /// Declared columns (at most `u32::MAX`).
    pub ncols: usize,
    /// Declared entries: the third number of a coordinate size line; for an array, the number of
    /// values the file must hold given its symmetry.
    pub entries: u64,
    /// 1-based line number of the size line.
    pub size_line: u64,
    /// Byte offset of the first line after the size line.
    pub body: usize,
}

impl Header {
    /// 1-based line number of the first line after the size line.
    pub fn body_line(&self) -> u64 {
        self.size_line + 1
    }
}

/// Rows are capped so that `nrows + 1` row pointers stay addressable.
const MAX_ROWS: u64 = (isize::MAX as u64) / 8;

/// Parse the banner (line 1) and the size line (the first line after it that is neither blank
/// nor a `%` comment).
pub fn parse(name: &str, s: &[u8]) -> Result<Header> {
    let err = |line: u64, msg: String| Error::parse(name, line, msg);
    // An UTF-8 byte-order mark is tolerated before the banner.
    let start = if s.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    let banner_end = lex::next_line(s, start);
    let banner = &s[start..banner_end];
    let words: Vec<&[u8]> = banner
        .split(|&b| lex::is_blank(b) || b == b'\n')
        .filter(|w| !w.is_empty())
        .collect();
    let show = |w: &[u8]| format!("{:?}", String::from_utf8_lossy(w));
    if words.is_empty() {
        return Err(err(
            1,
            format!(
                "expected the Matrix Market banner '{BANNER_HELP}', found {}",
                if s.len() <= start {
                    "an empty file"
                } else {
                    "an empty line"
                }
            ),
        ));
    }
    if !words[0].eq_ignore_ascii_case(b"%%MatrixMarket") {
        return Err(err(
            1,
            format!(
                "expected the Matrix Market banner '{BANNER_HELP}', found {}",
                lex::show_token(s, start)
            ),
        ));
    }
    if words.len() < 5 {
        return Err(err(
            1,
            format!(
                "incomplete banner: expected '{BANNER_HELP}' (object, layout, field and symmetry), \
                 found {} word(s)",
                words.len()
            ),
        ));
    }
    if words.len() > 5 {
        return Err(err(
            1,
            format!(
                "unexpected {} after the symmetry in the banner: expected '{BANNER_HELP}'",
                show(words[5])
            ),
        ));
    }
    let lower: Vec<String> = words[1..]
        .iter()
        .map(|w| String::from_utf8_lossy(w).to_ascii_lowercase())
        .collect();
    if lower[0] != "matrix" {
        return Err(err(
            1,
            format!("unsupported object {}: expected 'matrix'", show(words[1])),
        ));
    }
    let layout = match lower[1].as_str() {
        "coordinate" => Layout::Coordinate,
        "array" => Layout::Array,
        _ => {
            return Err(err(
                1,
                format!(
                    "unknown layout {}: expected 'coordinate' or 'array'",
                    show(words[2])
                ),
            ))
        }
    };
    let field = match lower[2].as_str() {
        "real" => Field::Real,
        "integer" => Field::Integer,
        "pattern" => Field::Pattern,
        "complex" => {
            return Err(err(
                1,
                "unsupported field 'complex': complex values are not supported \
                 (expected 'real', 'integer' or 'pattern')"
                    .into(),
            ))
        }
        _ => {
            return Err(err(
                1,
                format!(
                    "unknown field {}: expected 'real', 'integer' or 'pattern'",
                    show(words[3])
                ),
            ))
        }
    };
    let symmetry = match lower[3].as_str() {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::SkewSymmetric,
        "hermitian" => {
            return Err(err(
                1,
                "unsupported symmetry 'hermitian': complex values are not supported \
                 (expected 'general', 'symmetric' or 'skew-symmetric')"
                    .into(),
            ))
        }
        _ => {
            return Err(err(
                1,
                format!(
                    "unknown symmetry {}: expected 'general', 'symmetric' or 'skew-symmetric'",
                    show(words[4])
                ),
            ))
        }
    };
    if field == Field::Pattern && layout == Layout::Array {
        return Err(err(
            1,
            "field 'pattern' cannot be used with layout 'array': expected 'real' or 'integer'"
                .into(),
        ));
    }
    if field == Field::Pattern && symmetry == Symmetry::SkewSymmetric {
        return Err(err(
            1,
            "field 'pattern' cannot be skew-symmetric: expected 'general' or 'symmetric'".into(),
        ));
    }

    // Skip comments and blank lines up to the size line.
    let mut line = 2u64;
    let mut p = banner_end;
    loop {
        if p >= s.len() {
            return Err(err(
                line,
                format!(
                    "unexpected end of file: expected the size line '{}'",
                    size_help(layout)
                ),
            ));
        }
        let q = lex::skip_blanks(s, p);
        if q < s.len() && s[q] != b'\n' && s[q] != b'%' {
            p = q;
            break;
        }
        p = lex::next_line(s, p);
        line += 1;
    }
    let size_line = line;
    let want = match layout {
        Layout::Coordinate => 3,
        Layout::Array => 2,
    };
    let mut nums = [0u64; 3];
    for (k, num) in nums.iter_mut().enumerate().take(want) {
        p = lex::skip_blanks(s, p);
        *num = lex::parse_uint(s, p)
            .map(|(v, q)| {
                p = q;
                v
            })
            .map_err(|e| {
                let what = match e {
                    BadIndex::TooLarge => "is too large",
                    _ => "is not a non-negative integer",
                };
                err(
                    size_line,
                    format!(
                        "size line: {} {what}: expected '{}' (number {} of {want})",
                        lex::show_token(s, p),
                        size_help(layout),
                        k + 1
                    ),
                )
            })?;
    }
    let body = lex::line_rest_is_blank(s, p).ok_or_else(|| {
        err(
            size_line,
            format!(
                "size line: unexpected {} after {want} numbers: expected '{}'",
                lex::show_token(s, p),
                size_help(layout)
            ),
        )
    })?;
    let (nrows, ncols) = (nums[0], nums[1]);
    if ncols > u32::MAX as u64 {
        return Err(err(
            size_line,
            format!(
                "{ncols} columns exceed the supported maximum of {} (column indices are 32-bit)",
                u32::MAX
            ),
        ));
    }
    if nrows > MAX_ROWS {
        return Err(err(
            size_line,
            format!("{nrows} rows exceed the supported maximum of {MAX_ROWS}"),
        ));
    }
    if symmetry != Symmetry::General && nrows != ncols {
        return Err(err(
            size_line,
            format!(
                "a {} matrix must be square, but the size line declares {nrows} × {ncols}",
                symmetry_name(symmetry)
            ),
        ));
    }
    let entries = match layout {
        Layout::Coordinate => nums[2],
        Layout::Array => {
            let n = nrows as u128;
            let count = match symmetry {
                Symmetry::General => n * ncols as u128,
                Symmetry::Symmetric => n * (n + 1) / 2,
                Symmetry::SkewSymmetric => n * n.saturating_sub(1) / 2,
            };
            u64::try_from(count).map_err(|_| {
                err(
                    size_line,
                    format!("{nrows} × {ncols} array holds more than 2^64 values"),
                )
            })?
        }
    };
    Ok(Header {
        layout,
        field,
        symmetry,
        nrows: nrows as usize,
        ncols: ncols as usize,
        entries,
        size_line,
        body,
    })
}

/// The expected size line for a layout, for error messages.
pub fn size_help(layout: Layout) -> &'static str {
    match layout {
        Layout::Coordinate => "rows columns entries",
        Layout::Array => "rows columns",
    }
}

/// The banner word of a symmetry.
pub fn symmetry_name(s: super::Symmetry) -> &'static str {
    match s {
        Symmetry::General => "general",
        Symmetry::Symmetric => "symmetric",
        Symmetry::SkewSymmetric => "skew-symmetric",
    }
}
