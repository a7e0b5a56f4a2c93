// SPDX-License-Identifier: GPL-2.0-only
//! The statistics of a bench cell: mean, spread, n, and the ratio of two cells with a
//! 95 % confidence interval; and the seeded shuffle that orders the runs.

use std::collections::BTreeMap;

/// One cell: the runs of one configuration at one load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for one run.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

pub fn cell(v: &BTreeMap<u32, f64>) -> Option<Cell> {
    let n = v.len();
    if n == 0 {
        return None;
    }
    let mean = v.values().sum::<f64>() / n as f64;
    let var = if n > 1 {
        v.values().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    Some(Cell {
        n,
        mean,
        sd: var.sqrt(),
        min: v.values().copied().fold(f64::INFINITY, f64::min),
        max: v.values().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// a / b with a 95 % confidence interval, from Welch's t on the logs of the means (the
/// delta method: var(ln mean) ~ sd^2 / (n mean^2)), with Welch-Satterthwaite's degrees
/// of freedom. `significant` when the interval leaves out 1. None without two runs on
/// each side, with no spread on both sides (nothing to judge by) or with a mean <= 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
    pub significant: bool,
}

pub fn ratio_ci(a: &Cell, b: &Cell) -> Option<Ratio> {
    if a.n < 2 || b.n < 2 || a.mean <= 0.0 || b.mean <= 0.0 {
        return None;
    }
    let va = (a.sd / a.mean).powi(2) / a.n as f64;
    let vb = (b.sd / b.mean).powi(2) / b.n as f64;
    let ratio = a.mean / b.mean;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // no spread on either side: nothing to judge a difference by
        return None;
    }
    let df = (va + vb).powi(2) / (va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64);
    let half = t975(df) * se;
    let (lo, hi) = (ratio * (-half).exp(), ratio * half.exp());
    Some(Ratio {
        ratio,
        lo,
        hi,
        significant: lo > 1.0 || hi < 1.0,
    })
}

/// The runs of `a` and `b` paired by run number (the schedule runs every configuration
/// once per round, so run k of each shares its round): the geometric mean of the
/// per-run ratios a_k / b_k with a 95 % t interval on the mean log ratio (n - 1
/// degrees of freedom). None with fewer than two pairs, a value <= 0, or every log
/// ratio the same (no spread to judge by).
pub fn paired_ci(a: &BTreeMap<u32, f64>, b: &BTreeMap<u32, f64>) -> Option<Ratio> {
    let logs: Vec<f64> = a
        .iter()
        .filter_map(|(k, x)| b.get(k).map(|y| (*x, *y)))
        .map(|(x, y)| {
            if x > 0.0 && y > 0.0 {
                (x / y).ln()
            } else {
                f64::NAN
            }
        })
        .collect();
    let n = logs.len();
    if n < 2 || logs.iter().any(|l| l.is_nan()) {
        return None;
    }
    let m = logs.iter().sum::<f64>() / n as f64;
    let var = logs.iter().map(|l| (l - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    if var == 0.0 {
        return None;
    }
    let half = t975((n - 1) as f64) * (var / n as f64).sqrt();
    let (lo, hi) = ((m - half).exp(), (m + half).exp());
    Some(Ratio {
        ratio: m.exp(),
        lo,
        hi,
        significant: lo > 1.0 || hi < 1.0,
    })
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (two-sided 95 %),
/// from the table for 1..=30 (interpolated), then the normal tail correction.
pub fn t975(df: f64) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if !df.is_finite() || df > 30.0 {
        let d = if df.is_finite() { df } else { f64::MAX };
        // Cornish-Fisher: z + (z^3 + z) / (4 df)
        let z = 1.959964;
        return z + (z * z * z + z) / (4.0 * d);
    }
    let d = df.max(1.0);
    let i = d.floor() as usize;
    if i >= 30 {
        return T[29];
    }
    let f = d - i as f64;
    T[i - 1] + (T[i.min(29)] - T[i - 1]) * f
}

/// splitmix64: the seeded source of the run order (no dependency, same on every host).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Fisher-Yates.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(v: &[f64]) -> BTreeMap<u32, f64> {
        v.iter()
            .enumerate()
            .map(|(i, x)| (i as u32 + 1, *x))
            .collect()
    }

    #[test]
    fn cell_mean_sd_range() {
        let c = cell(&runs(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])).unwrap();
        assert_eq!((c.n, c.mean, c.min, c.max), (8, 5.0, 2.0, 9.0));
        assert!((c.sd - 2.138).abs() < 0.001, "{}", c.sd);
        assert_eq!(cell(&runs(&[3.0])).unwrap().sd, 0.0);
        assert!(cell(&BTreeMap::new()).is_none());
    }

    #[test]
    fn ratio_interval_and_significance() {
        // well separated: significant
        let a = cell(&runs(&[90.0, 91.0, 89.0, 90.5, 89.5])).unwrap();
        let b = cell(&runs(&[100.0, 101.0, 99.0, 100.5, 99.5])).unwrap();
        let r = ratio_ci(&a, &b).unwrap();
        assert!((r.ratio - 0.9).abs() < 1e-9);
        assert!(
            r.lo < 0.9 && r.hi > 0.9 && r.hi < 1.0 && r.significant,
            "{r:?}"
        );
        // the seed's masterx against SIS_UTIL at 64 clients: overlapping runs, not significant
        let x = cell(&runs(&[37.2, 38.2, 34.8])).unwrap();
        let u = cell(&runs(&[37.4, 35.6, 39.0])).unwrap();
        let r = ratio_ci(&u, &x).unwrap();
        assert!(r.lo < 1.0 && r.hi > 1.0 && !r.significant, "{r:?}");
        // one run: no interval
        assert!(ratio_ci(&cell(&runs(&[1.0])).unwrap(), &b).is_none());
    }

    #[test]
    fn no_spread_no_interval() {
        let a = cell(&runs(&[7.0, 7.0, 7.0])).unwrap();
        let b = cell(&runs(&[8.0, 8.0, 8.0])).unwrap();
        assert!(ratio_ci(&a, &b).is_none());
        assert!(paired_ci(&runs(&[7.0, 7.0]), &runs(&[8.0, 8.0])).is_none());
    }

    #[test]
    fn paired_by_run() {
        // a round effect that Welch sees as spread: every run of a is 0.9 of b's round
        let b = runs(&[100.0, 120.0, 80.0, 110.0, 90.0]);
        let a = runs(&[90.0, 108.5, 72.0, 98.5, 81.0]);
        let welch = ratio_ci(&cell(&a).unwrap(), &cell(&b).unwrap()).unwrap();
        let p = paired_ci(&a, &b).unwrap();
        assert!(!welch.significant, "{welch:?}");
        assert!(
            p.significant && p.hi < 1.0 && (p.ratio - 0.9).abs() < 0.005,
            "{p:?}"
        );
        // unmatched runs are left out; one pair is not enough
        let mut c = runs(&[90.0]);
        c.insert(9, 5.0);
        assert!(paired_ci(&c, &b).is_none());
        assert!(paired_ci(&runs(&[0.0, 1.0]), &runs(&[1.0, 1.0])).is_none());
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(4.0), 2.776);
        assert!((t975(4.5) - 2.6735).abs() < 1e-9);
        assert!((t975(1000.0) - 1.962).abs() < 0.001);
    }

    #[test]
    fn shuffle_is_seeded() {
        let mut a: Vec<u32> = (0..6).collect();
        let mut b = a.clone();
        Rng::new(7).shuffle(&mut a);
        Rng::new(7).shuffle(&mut b);
        assert_eq!(a, b);
        let mut c: Vec<u32> = (0..6).collect();
        Rng::new(8).shuffle(&mut c);
        assert_ne!(a, c);
        a.sort();
        assert_eq!(a, (0..6).collect::<Vec<_>>());
    }
}
