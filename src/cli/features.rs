//! `sparsecast features`: print the features of a Matrix Market file.

use crate::features::Features;
use crate::matrix::mm::{self, MmInfo};
use crate::scalar::{Precision, Scalar};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde::Serialize;
use std::path::{Path, PathBuf};

const LONG_ABOUT: &str = "\
Compute the features of a sparse matrix that the performance models use: dimensions, non-zeros,
row-length statistics (min / max / mode / lower median / mean / population std), the minimum and
maximum gap between consecutive non-zeros of a row, bandwidth, density, empty rows, ELL padding,
the HYB split (Bell & Garland width, COO share), occupied diagonals, a log2 histogram of row
lengths and the number of NaN / infinite values.

Examples:
  sparsecast features cage11.mtx.gz
  sparsecast features cage11.mtx.gz --json > cage11.features.json
  sparsecast features big.mtx --precision f32   # count values that overflow single precision";

/// Compute and print the features of a Matrix Market file.
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT)]
pub struct Args {
    /// Matrix Market file (plain or gzip).
    file: PathBuf,
    /// Print JSON (file, precision, header, features) instead of a table.
    #[arg(long)]
    json: bool,
    /// Precision the values are read in: NaN/Inf are counted as stored in it.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
}

/// The JSON document `--json` prints.
#[derive(Serialize)]
struct Report<'a> {
    file: &'a Path,
    precision: Precision,
    header: &'a MmInfo,
    features: &'a Features,
}

/// Run `sparsecast features`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let (info, f) = match a.precision {
        Precision::F32 => load::<f32>(&a.file)?,
        Precision::F64 => load::<f64>(&a.file)?,
    };
    if f.nonfinite > 0 {
        eprintln!(
            "warning: {}: {} value(s) are NaN or infinite in {}",
            a.file.display(),
            f.nonfinite,
            a.precision
        );
    }
    if a.json {
        let r = Report {
            file: &a.file,
            precision: a.precision,
            header: &info,
            features: &f,
        };
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!("{}", table(&a.file, &info, &f));
    }
    Ok(())
}

fn load<T: Scalar>(path: &Path) -> anyhow::Result<(MmInfo, Features)> {
    let (m, info) = mm::read_with_info::<T>(path)?;
    Ok((info, Features::compute(&m)))
}

fn opt(v: Option<usize>) -> String {
    v.map_or_else(|| "—".to_string(), |x| x.to_string())
}

/// Log2 histogram as `0:3 1:10 2-3:7 4-7:1`.
pub(crate) fn hist_text(h: &[usize]) -> String {
    h.iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(k, c)| match k {
            0 => format!("0:{c}"),
            1 => format!("1:{c}"),
            _ => format!("{}-{}:{c}", 1usize << (k - 1), (1usize << k) - 1),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn table(file: &Path, info: &MmInfo, f: &Features) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec!["feature", "value"]);
    let header = format!(
        "{:?} {:?} {:?}{}",
        info.layout,
        info.field,
        info.symmetry,
        if info.gzip { ", gzip" } else { "" }
    )
    .to_lowercase();
    let rows: Vec<(&str, String)> = vec![
        ("file", file.display().to_string()),
        ("header", header),
        ("rows", f.nrows.to_string()),
        ("columns", f.ncols.to_string()),
        ("non-zeros", f.nnz.to_string()),
        ("density", format!("{:.3e}", f.density)),
        (
            "row nnz min / max",
            format!("{} / {}", f.min_nnz, f.max_nnz),
        ),
        (
            "row nnz mode / median",
            format!("{} / {}", f.mode_nnz, f.median_nnz),
        ),
        (
            "row nnz mean / std",
            format!("{:.3} / {:.3}", f.mean_nnz, f.std_nnz),
        ),
        ("empty rows", f.empty_rows.to_string()),
        (
            "min / max distance in a row",
            format!("{} / {}", opt(f.min_dist), opt(f.max_dist)),
        ),
        ("bandwidth", f.bandwidth.to_string()),
        ("occupied diagonals", f.diagonals.to_string()),
        ("ELL padding ratio", format!("{:.3}", f.ell_padding_ratio)),
        (
            "HYB width / COO entries",
            format!(
                "{} / {} ({:.1} %)",
                f.hyb_width,
                f.hyb_coo_nnz,
                100.0 * f.hyb_coo_share
            ),
        ),
        ("row length log2 histogram", hist_text(&f.row_len_log2_hist)),
        ("NaN / Inf values", f.nonfinite.to_string()),
    ];
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    t
}

#[cfg(test)]
mod tests {
    #[test]
    fn histogram_text() {
        assert_eq!(super::hist_text(&[3, 10, 0, 1]), "0:3 1:10 4-7:1");
        assert_eq!(super::hist_text(&[]), "");
    }
}
