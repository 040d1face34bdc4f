//! Fitting the stage on held-out first-stage predictions, and its cross-validation by family
//! folds.

use super::*;

/// What the fit works on: the cases with their standardised shapes, regrets and ids.
pub(super) struct Prepared<'a> {
    cases: &'a [Case],
    configs: Vec<String>,
    mean: Vec<f64>,
    sd: Vec<f64>,
    z: Vec<Vec<f64>>,
    hash: Vec<u32>,
    /// Per case, per configuration id: `ln(T / T_best)`.
    regret: Vec<Vec<Option<f64>>>,
    /// Per case: `(id, predicted seconds)` of each candidate, in the case's order.
    ids: Vec<Vec<usize>>,
}

impl<'a> Prepared<'a> {
    pub(super) fn new(cases: &'a [Case]) -> Result<Prepared<'a>> {
        let d = cases.first().map_or(0, |c| c.shape.len());
        if d == 0 || cases.iter().any(|c| c.shape.len() != d) {
            return Err(Error::Invalid(
                "the pick stage needs the shapes of every training matrix".into(),
            ));
        }
        let mut configs: Vec<String> = cases
            .iter()
            .flat_map(|c| c.cands.iter().map(|x| x.config.clone()))
            .collect();
        configs.sort();
        configs.dedup();
        let n = cases.len() as f64;
        let mean: Vec<f64> = (0..d)
            .map(|j| cases.iter().map(|c| c.shape[j]).sum::<f64>() / n)
            .collect();
        let sd: Vec<f64> = (0..d)
            .map(|j| {
                let v = cases
                    .iter()
                    .map(|c| (c.shape[j] - mean[j]).powi(2))
                    .sum::<f64>()
                    / n;
                v.sqrt().max(1e-9)
            })
            .collect();
        let scaler = Scaler {
            mean: &mean,
            sd: &sd,
        };
        let z = cases.iter().map(|c| scaler.z(&c.shape)).collect();
        let id = |l: &str| configs.binary_search_by(|c| c.as_str().cmp(l)).unwrap();
        let ids: Vec<Vec<usize>> = cases
            .iter()
            .map(|c| c.cands.iter().map(|x| id(&x.config)).collect())
            .collect();
        let regret = cases
            .iter()
            .zip(&ids)
            .map(|(c, ids)| {
                let best = c.best();
                let mut r = vec![None; configs.len()];
                for (x, &i) in c.cands.iter().zip(ids) {
                    r[i] = Some((x.measured / best).ln());
                }
                r
            })
            .collect();
        Ok(Prepared {
            cases,
            hash: cases.iter().map(|c| family_hash(&c.family)).collect(),
            configs,
            mean,
            sd,
            z,
            regret,
            ids,
        })
    }

    /// Case `i`'s candidate inputs, its neighbours from the library cases `lib` allows (same
    /// precision, never `i`'s family).
    pub(super) fn rows(
        &self,
        i: usize,
        lib: &(dyn Fn(usize) -> bool + Sync),
    ) -> Vec<(usize, Vec<f64>)> {
        let c = &self.cases[i];
        let near = nearest(
            (0..self.cases.len())
                .filter(|&j| self.cases[j].f64 == c.f64 && self.hash[j] != self.hash[i] && lib(j))
                .map(|j| (j, dist2(&self.z[i], &self.z[j]))),
            NEIGHBOURS,
        );
        let preds: Vec<(usize, &str, f64)> = c
            .cands
            .iter()
            .zip(&self.ids[i])
            .map(|(x, &id)| (id, x.config.as_str(), x.predicted))
            .collect();
        inputs(&preds, c.f64, &c.shape, TOP, |id| {
            knn_regret(&near, |j| self.regret[j][id])
        })
    }

    /// Trees fitted on the cases `train` allows, each with neighbours from those cases.
    fn fit(&self, train: &(dyn Fn(usize) -> bool + Sync)) -> Result<(f64, Vec<Tree>)> {
        let rows: Vec<(Vec<f64>, f64)> = (0..self.cases.len())
            .into_par_iter()
            .filter(|&i| train(i))
            .flat_map_iter(|i| {
                self.rows(i, train).into_iter().map(move |(c, x)| {
                    let r = self.regret[i][self.ids[i][c]].unwrap_or(0.0);
                    (x, r.min(REGRET_CAP))
                })
            })
            .collect();
        if rows.len() < 2 * TOP {
            return Err(Error::Invalid(format!(
                "the pick stage needs more training matrices ({} candidate rows)",
                rows.len()
            )));
        }
        let (xs, ys): (Vec<Vec<f64>>, Vec<f64>) = rows.into_iter().unzip();
        gb::boost(&xs, &ys, BOOST, "the pick stage")
    }

    /// The candidate (index into the case's candidates) the stage `(base, trees)` picks for
    /// case `i`, neighbours from the cases `lib` allows.
    fn pick(
        &self,
        i: usize,
        (base, trees): &(f64, Vec<Tree>),
        lib: &(dyn Fn(usize) -> bool + Sync),
    ) -> usize {
        self.rows(i, lib)
            .iter()
            .map(|(c, x)| (*c, eval(*base, trees, x)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(0, |(c, _)| c)
    }

    /// The stage of one precision: the pooled trees, the library of that precision's cases.
    fn stage(&self, (base, trees): &(f64, Vec<Tree>), f64: bool) -> PickStage {
        let nc = self.configs.len();
        let mut library = Library::default();
        for i in (0..self.cases.len()).filter(|&i| self.cases[i].f64 == f64) {
            library.families.push(self.hash[i]);
            library
                .shapes
                .extend(self.z[i].iter().map(|v| (v * SCALE).round() as i32));
            library.regrets.extend((0..nc).map(|id| {
                self.regret[i][id].map_or(-1, |r| (r * SCALE).round().min(i32::MAX as f64) as i32)
            }));
        }
        PickStage {
            f64,
            top: TOP,
            neighbours: NEIGHBOURS,
            configs: self.configs.clone(),
            mean: self.mean.clone(),
            sd: self.sd.clone(),
            base: *base,
            trees: trees.clone(),
            library,
        }
    }
}

/// Fit the stage on every case (neighbours never of a case's own family) and return the stages
/// of f32 and f64 (`None` for a precision without cases).
pub fn fit(cases: &[Case]) -> Result<[Option<PickStage>; 2]> {
    fit_prepared(&Prepared::new(cases)?)
}

/// [`cross_validate`] then [`fit`] on one preparation of `cases` (what `train` does).
pub fn fit_and_score(cases: &[Case], folds: usize) -> Result<([Option<PickStage>; 2], Vec<Score>)> {
    let p = Prepared::new(cases)?;
    let scores = scores(&p, folds)?;
    Ok((fit_prepared(&p)?, scores))
}

pub(super) fn fit_prepared(p: &Prepared<'_>) -> Result<[Option<PickStage>; 2]> {
    let cases = p.cases;
    let model = p.fit(&|_| true)?;
    Ok([false, true].map(|f64| {
        cases
            .iter()
            .any(|c| c.f64 == f64)
            .then(|| p.stage(&model, f64))
    }))
}

/// Cross-validate the stage by family folds ([`crate::learn::dataset::fold_of`], the first stage's
/// folds): for each fold, trees fitted on the other folds' cases (neighbours from those folds),
/// then each held-out case picked with neighbours from the other folds only. Folds run in
/// parallel. Scores per precision, f32 first.
pub fn cross_validate(cases: &[Case], folds: usize) -> Result<Vec<Score>> {
    scores(&Prepared::new(cases)?, folds)
}

/// The picks of [`cross_validate`]: each case's candidate (an index into its `cands`) as the
/// stage fitted on the other folds picks it — for experiments on what follows the stage
/// (`examples/stage_tie.rs`).
pub fn cross_validated_picks(cases: &[Case], folds: usize) -> Result<Vec<usize>> {
    let mut picks = vec![0; cases.len()];
    for (i, c) in fold_picks(&Prepared::new(cases)?, folds)? {
        picks[i] = c;
    }
    Ok(picks)
}

pub(super) fn scores(p: &Prepared<'_>, folds: usize) -> Result<Vec<Score>> {
    let picks = fold_picks(p, folds)?;
    Ok(score_picks(
        picks.into_iter().map(|(i, c)| (&p.cases[i], c)),
    ))
}

/// `(case, its pick)` of every case, each picked by the stage fitted on the other folds.
pub(super) fn fold_picks(p: &Prepared<'_>, folds: usize) -> Result<Vec<(usize, usize)>> {
    let cases = p.cases;
    let fold: Vec<usize> = cases
        .iter()
        .map(|c| crate::learn::dataset::fold_of(&c.family, folds))
        .collect();
    let picks: Vec<(usize, usize)> = (0..folds)
        .into_par_iter()
        .map(|k| -> Result<Vec<(usize, usize)>> {
            let other = |j: usize| fold[j] != k;
            let model = p.fit(&other)?;
            Ok((0..cases.len())
                .filter(|&i| fold[i] == k)
                .map(|i| (i, p.pick(i, &model, &other)))
                .collect())
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    Ok(picks)
}
