//! A fixed subset of a corpus draw (`collect --only FILE`): the matrices of a smaller target —
//! a green-context partition, the CPU — measured under the same ids as the full tables, so that
//! `crossarch` pairs them by name.
//!
//! The list is a text file of matrix ids (`mats/cage11.mtx.gz`, `gen/00257-…`, as `collect
//! --list` prints them), one a line; blank lines and everything after `#` are ignored. The ids
//! and families stay those of the full draw; the matrices are measured **in the list's order**
//! (not the draw's), so that a list puts first what a time budget must not cut. An id the draw
//! lacks is an error naming it: a list made for one corpus (its files, seed and size range) must
//! not silently measure fewer matrices on another.

use super::draw::Item;
use crate::{Error, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// The ids listed in `text`, in order, each once (see the module documentation).
pub fn parse_ids(text: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && seen.insert(l.to_string()))
        .map(str::to_string)
        .collect()
}

/// The ids listed in the file `path`.
pub fn read_ids(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let ids = parse_ids(&text);
    if ids.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: lists no matrix id (one a line, as `collect --list` prints them)",
            path.display()
        )));
    }
    Ok(ids)
}

/// The items of `items` whose id is in `ids`, in the order of `ids`; an error naming the ids
/// the draw does not hold.
pub fn keep(items: Vec<Item>, ids: &[String]) -> Result<Vec<Item>> {
    let mut by_id: std::collections::HashMap<String, Item> =
        items.into_iter().map(|i| (i.id.clone(), i)).collect();
    let missing: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| !by_id.contains_key(*id))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().copied().take(5).collect();
        return Err(Error::Invalid(format!(
            "{} listed matrices are not in this corpus draw (same --corpus directory name, \
             --seed, --generated and size range as the list was made for?): {}{}",
            missing.len(),
            shown.join(", "),
            if missing.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        )));
    }
    Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::draw::Build;

    fn item(id: &str) -> Item {
        Item {
            id: id.into(),
            family: id.into(),
            build: Build::File(id.into()),
            est_nnz: 1,
        }
    }

    #[test]
    fn a_list_keeps_its_order_and_refuses_unknown_ids() {
        let ids = parse_ids("# subset\n gen/2 \n\nmats/a.mtx.gz # a file\ngen/2\n");
        assert_eq!(ids, ["gen/2", "mats/a.mtx.gz"]);
        let items = vec![item("mats/a.mtx.gz"), item("gen/1"), item("gen/2")];
        let kept = keep(items.clone(), &ids).unwrap();
        let names: Vec<&str> = kept.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(names, ["gen/2", "mats/a.mtx.gz"]);
        let e = keep(items, &parse_ids("gen/9\ngen/1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 listed") && e.contains("gen/9"), "{e}");
    }
}
