// SPDX-License-Identifier: GPL-2.0-only
//! Percentiles from the BPF histograms.
//!
//! Latency: log2 buckets in microseconds; bucket 0 is [0, 1) us, bucket i >= 1 is
//! [2^(i-1), 2^i) us. A percentile is interpolated linearly inside its bucket, so it
//! is exact to within a factor of two; `max` is the upper edge of the highest
//! non-empty bucket (an upper bound, never an underestimate).
//! Scan length: one bucket per CPU count 0..63, the last bucket is ">= 64".

/// Edges of latency bucket `i`, in microseconds.
pub fn lat_bucket_edges(i: usize) -> (f64, f64) {
    if i == 0 {
        (0.0, 1.0)
    } else {
        let lo = (1u64 << (i - 1)) as f64;
        (lo, lo * 2.0)
    }
}

/// The 1-based rank of quantile `q` among `n` samples.
fn rank(q: f64, n: u64) -> u64 {
    ((q * n as f64).ceil() as u64).clamp(1, n)
}

/// The bucket holding the sample of rank ceil(q * n): (bucket, samples below it, rank).
fn rank_bucket(buckets: &[u64], q: f64) -> Option<(usize, u64, u64)> {
    let n: u64 = buckets.iter().sum();
    if n == 0 {
        return None;
    }
    let r = rank(q, n);
    let mut below = 0;
    for (i, &c) in buckets.iter().enumerate() {
        if c > 0 && below + c >= r {
            return Some((i, below, r));
        }
        below += c;
    }
    None
}

/// Quantile `q` (0 < q <= 1) of a latency histogram, in microseconds; 0 when empty.
pub fn lat_percentile(buckets: &[u64], q: f64) -> f64 {
    rank_bucket(buckets, q).map_or(0.0, |(i, below, r)| {
        let (lo, hi) = lat_bucket_edges(i);
        lo + (hi - lo) * (r - below) as f64 / buckets[i] as f64
    })
}

/// Upper edge of the highest non-empty latency bucket; 0 when empty.
pub fn lat_max(buckets: &[u64]) -> f64 {
    buckets
        .iter()
        .rposition(|&c| c > 0)
        .map(|i| lat_bucket_edges(i).1)
        .unwrap_or(0.0)
}

/// Quantile `q` of the scan-length histogram (exact up to 63).
pub fn scan_percentile(buckets: &[u64], q: f64) -> u64 {
    rank_bucket(buckets, q).map_or(0, |(i, _, _)| i as u64)
}

/// Largest scan length seen in the histogram.
pub fn scan_max(buckets: &[u64]) -> u64 {
    buckets.iter().rposition(|&c| c > 0).unwrap_or(0) as u64
}

pub fn mean_scan(buckets: &[u64]) -> f64 {
    let n: u64 = buckets.iter().sum();
    if n == 0 {
        return 0.0;
    }
    let sum: u64 = buckets.iter().enumerate().map(|(i, &c)| i as u64 * c).sum();
    sum as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges() {
        assert_eq!(lat_bucket_edges(0), (0.0, 1.0));
        assert_eq!(lat_bucket_edges(1), (1.0, 2.0));
        assert_eq!(lat_bucket_edges(4), (8.0, 16.0));
    }

    #[test]
    fn percentiles_by_hand() {
        // 100 samples: 50 in [1,2) us, 40 in [8,16) us, 9 in [64,128) us, 1 in [1024,2048) us
        let mut b = vec![0u64; 32];
        b[1] = 50;
        b[4] = 40;
        b[7] = 9;
        b[11] = 1;
        // p50: rank 50, the last sample of bucket 1 -> 1 + 1 * 50/50 = 2
        assert_eq!(lat_percentile(&b, 0.50), 2.0);
        // p90: rank 90, 40th of 40 in [8,16) -> 16
        assert_eq!(lat_percentile(&b, 0.90), 16.0);
        // p60: rank 60, 10th of 40 in [8,16) -> 8 + 8 * 10/40 = 10
        assert_eq!(lat_percentile(&b, 0.60), 10.0);
        // p99: rank 99, 9th of 9 in [64,128) -> 128
        assert_eq!(lat_percentile(&b, 0.99), 128.0);
        // p99.9: rank ceil(99.9) = 100, the single sample in [1024,2048) -> 2048
        assert_eq!(lat_percentile(&b, 0.999), 2048.0);
        assert_eq!(lat_max(&b), 2048.0);
    }

    #[test]
    fn sub_microsecond_and_single_sample() {
        let mut b = vec![0u64; 32];
        b[0] = 4;
        assert_eq!(lat_percentile(&b, 0.5), 0.5);
        assert_eq!(lat_max(&b), 1.0);
        let mut one = vec![0u64; 32];
        one[3] = 1; // [4, 8) us
        assert_eq!(lat_percentile(&one, 0.5), 8.0);
        assert_eq!(lat_percentile(&one, 0.999), 8.0);
    }

    #[test]
    fn empty_histograms_are_zero() {
        let b = vec![0u64; 32];
        assert_eq!(lat_percentile(&b, 0.99), 0.0);
        assert_eq!(lat_max(&b), 0.0);
        assert_eq!(scan_percentile(&b, 0.99), 0);
        assert_eq!(mean_scan(&b), 0.0);
    }

    #[test]
    fn scan_lengths() {
        let mut b = vec![0u64; 65];
        b[0] = 90; // 90 calls tested nothing beyond target/prev
        b[3] = 9;
        b[8] = 1;
        assert_eq!(scan_percentile(&b, 0.5), 0);
        assert_eq!(scan_percentile(&b, 0.99), 3);
        assert_eq!(scan_percentile(&b, 1.0), 8);
        assert_eq!(scan_max(&b), 8);
        assert!((mean_scan(&b) - 0.35).abs() < 1e-9);
    }
}
