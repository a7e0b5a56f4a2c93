// SPDX-License-Identifier: GPL-2.0-only
//! The live topology, flattened into the arrays the BPF side walks: each LLC's CPUs
//! in id order (select_idle_cpu wraps over them) and each core's siblings
//! (select_idle_core / select_idle_smt). Any CPU numbering works: siblings need not
//! be adjacent, and offline CPUs are simply absent. After a CPU hotplug the loader
//! reads it again and rewrites the arrays in place; an LLC or core keeps its index for
//! the loader's life (`Ids`), so the BPF side's per-LLC state and queues stay its own.

use crate::bpf_intf;
use crate::bpf_skel::types::{bss, rodata};
use anyhow::{bail, Context, Result};
use scx_utils::Topology;
use std::collections::BTreeMap;

const MAX_CPUS: usize = bpf_intf::consts_MAX_CPUS as usize;
const MAX_LLCS: usize = bpf_intf::consts_MAX_LLCS as usize;
const MAX_SIBLINGS: usize = bpf_intf::consts_MAX_SIBLINGS as usize;
const MAX_NODES: usize = bpf_intf::consts_MAX_NODES as usize;
/// LLC index of CPUs that are not online: shares a cache with nobody (intf.h NO_LLC).
const NO_LLC: u32 = bpf_intf::consts_NO_LLC;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct SisTopology {
    pub nr_cpu_ids: usize,
    pub smt: bool,
    pub nr_nodes: usize,
    pub cpu_llc: Vec<u32>,
    pub cpu_node: Vec<u32>,
    pub cpu_core: Vec<u32>,
    pub cpu_llc_pos: Vec<u32>,
    pub llc_cpus: Vec<u32>,
    pub llc_off: Vec<u32>,
    pub llc_nr: Vec<u32>,
    pub llc_node: Vec<u32>,
    pub core_cpus: Vec<u32>,
    pub core_off: Vec<u32>,
    pub core_nr: Vec<u32>,
    /// Per node, the nodes beyond node_reclaim_distance (bits); all near by default.
    pub node_far: Vec<u64>,
    pub node_reclaim_distance: u32,
}

/// One online CPU: (cpu, llc key, core key, node). Keys name an LLC or a core the
/// same way in every read of sysfs (kernel ids, not scx_utils' running counts).
pub type CpuDesc = (usize, usize, usize, usize);

/// The index each LLC and core got when first seen: kept across rereads, so that a
/// hotplug never renumbers an LLC under its queue and hint.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Ids {
    llc: BTreeMap<usize, u32>,
    core: BTreeMap<(usize, usize), u32>,
}

impl Ids {
    fn llc(&mut self, key: usize) -> u32 {
        let next = self.llc.len() as u32;
        *self.llc.entry(key).or_insert(next)
    }

    fn core(&mut self, key: (usize, usize)) -> u32 {
        let next = self.core.len() as u32;
        *self.core.entry(key).or_insert(next)
    }
}

impl SisTopology {
    /// Read sysfs; a CPU going on- or offline meanwhile makes its files vanish, so a
    /// failed read is retried for up to a second (a restart after hotplug races with
    /// the next hotplug event).
    pub fn read(ids: &mut Ids) -> Result<Self> {
        Ok(Self::read_cpus(ids)?.with_nodes())
    }

    /// The CPU part of read(): what a hotplug changes, so what read_settled() retries.
    fn read_cpus(ids: &mut Ids) -> Result<Self> {
        let mut tries = 0;
        let t = loop {
            match Topology::new() {
                Ok(t) => break t,
                Err(e) if tries < 20 => {
                    log::debug!("topology read failed ({e:#}), retrying");
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => return Err(e),
            }
        };
        // kernel ids: scx_utils numbers LLCs and cores in the order it meets them
        let key = |node: usize, pkg: usize, id: usize| (node << 40) | (pkg << 20) | id;
        let cpus: Vec<CpuDesc> = t
            .all_cpus
            .values()
            .map(|c| {
                let llc = t.all_llcs.get(&c.llc_id).map_or(c.llc_id, |l| l.kernel_id);
                let core = t
                    .all_cores
                    .get(&c.core_id)
                    .map_or(c.core_id, |k| k.kernel_id);
                (
                    c.id,
                    key(c.node_id, c.package_id, llc),
                    key(0, c.package_id, core),
                    c.node_id,
                )
            })
            .collect();
        let possible = libbpf_rs::num_possible_cpus().context("reading the possible CPUs")?;
        Self::build(&cpus, possible, ids)
    }

    /// The nodes beyond node_reclaim_distance of each other, read once per topology;
    /// unreadable distances (a node coming online meanwhile) leave every node near.
    fn with_nodes(mut self) -> Self {
        self.node_reclaim_distance = node_reclaim_distance();
        let dist = node_distances().unwrap_or_else(|e| {
            log::warn!("NUMA distances not read ({e:#}): every node taken as near");
            Vec::new()
        });
        self.node_far = far_nodes(&dist, self.node_reclaim_distance);
        self
    }

    /// Read sysfs until what it lists is what the kernel has online, with no CPU
    /// between hotplug states before or after the read: just after a hotplug callback
    /// a CPU's topology and cache files may still be coming or going (a CPU read then
    /// seems to have an LLC of its own). A read that raced one is dropped, ids too.
    pub fn read_settled(ids: &mut Ids) -> Result<Self> {
        let mut last = String::new();
        for _ in 0..40 {
            let want = online_cpus()?;
            if hotplug_settled()? {
                let mut trial = ids.clone();
                let t = Self::read_cpus(&mut trial)?;
                if hotplug_settled()? && online_cpus()? == want && t.online() == want {
                    *ids = trial;
                    return Ok(t.with_nodes());
                }
                last = format!(
                    "sysfs lists CPUs {:?}, the kernel has {want:?} online",
                    t.online()
                );
            } else {
                last = "a CPU is between hotplug states".into();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        bail!("{last}, for 2 s")
    }

    /// The CPUs this topology places (the online ones when it was read).
    pub fn online(&self) -> Vec<usize> {
        (0..self.nr_cpu_ids)
            .filter(|&c| self.cpu_llc[c] != NO_LLC)
            .collect()
    }

    /// status.json's topology fields.
    pub fn describe(&self, view: &mut serde_json::Value) {
        view["cpus"] = self.nr_cpus().into();
        view["llcs"] = self.nr_llcs().into();
        view["cores"] = self.nr_cores().into();
        view["nodes"] = self.nr_nodes.into();
        view["smt"] = self.smt.into();
        view["online"] = self.online().into();
        view["node_reclaim_distance"] = self.node_reclaim_distance.into();
        let far: u32 = self.node_far.iter().map(|m| m.count_ones()).sum();
        view["far_node_pairs"] = far.into();
    }

    pub fn nr_cpus(&self) -> usize {
        self.llc_cpus.len()
    }

    /// Flatten a CPU list. A key not seen before gets the next index (in key order
    /// within one read); one seen before keeps its index, with no CPU while offline.
    /// `possible`: the kernel's possible CPUs, so that every CPU that may come online
    /// later has its DSQ and a known (NO_LLC) place until it is read.
    pub fn build(cpus: &[CpuDesc], possible: usize, ids: &mut Ids) -> Result<Self> {
        let online = cpus.iter().map(|c| c.0 + 1).max().unwrap_or(0);
        if online == 0 {
            bail!("no online CPU in the topology");
        }
        let nr_cpu_ids = online.max(possible);
        if nr_cpu_ids == 0 || nr_cpu_ids > MAX_CPUS {
            bail!("{nr_cpu_ids} CPUs: scx_sis supports 1 to {MAX_CPUS}");
        }
        let mut llcs: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut cores: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
        let mut t = SisTopology {
            nr_cpu_ids,
            cpu_llc: vec![NO_LLC; nr_cpu_ids],
            cpu_node: vec![0; nr_cpu_ids],
            cpu_core: vec![0; nr_cpu_ids],
            cpu_llc_pos: vec![0; nr_cpu_ids],
            ..Default::default()
        };
        for &(cpu, llc, core, node) in cpus {
            llcs.entry(llc).or_default().push(cpu);
            // a core id is only unique within its LLC on some topologies
            cores.entry((llc, core)).or_default().push(cpu);
            t.cpu_node[cpu] = node as u32;
        }
        // every LLC ever seen has an index below nr_llcs; one now offline has no CPU
        let mut by_idx: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (key, list) in llcs {
            by_idx.insert(ids.llc(key), list);
        }
        let nr_llcs = ids.llc.len();
        if nr_llcs >= MAX_LLCS || nr_llcs > nr_cpu_ids {
            bail!(
                "{nr_llcs} LLCs: scx_sis supports at most {}",
                (MAX_LLCS - 1).min(nr_cpu_ids)
            );
        }
        for idx in 0..nr_llcs as u32 {
            let mut list = by_idx.remove(&idx).unwrap_or_default();
            list.sort_unstable();
            t.llc_off.push(t.llc_cpus.len() as u32);
            t.llc_nr.push(list.len() as u32);
            t.llc_node.push(list.first().map_or(0, |&c| t.cpu_node[c]));
            for (pos, cpu) in list.into_iter().enumerate() {
                t.cpu_llc[cpu] = idx;
                t.cpu_llc_pos[cpu] = pos as u32;
                t.llc_cpus.push(cpu as u32);
            }
        }
        let mut by_idx: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (key, sibs) in cores {
            by_idx.insert(ids.core(key), sibs);
        }
        if ids.core.len() > MAX_CPUS {
            bail!("{} cores seen: at most {MAX_CPUS}", ids.core.len());
        }
        for idx in 0..ids.core.len() as u32 {
            let mut sibs = by_idx.remove(&idx).unwrap_or_default();
            sibs.sort_unstable();
            if sibs.len() > MAX_SIBLINGS {
                bail!(
                    "a core with {} SMT siblings: at most {MAX_SIBLINGS}",
                    sibs.len()
                );
            }
            t.smt |= sibs.len() > 1;
            t.core_off.push(t.core_cpus.len() as u32);
            t.core_nr.push(sibs.len() as u32);
            for cpu in sibs {
                t.cpu_core[cpu] = idx;
                t.core_cpus.push(cpu as u32);
            }
        }
        let mut nodes: Vec<u32> = cpus.iter().map(|c| c.3 as u32).collect();
        nodes.sort_unstable();
        nodes.dedup();
        t.nr_nodes = nodes.len();
        if let Some(&n) = nodes.last().filter(|&&n| n as usize >= MAX_NODES) {
            bail!("NUMA node {n}: scx_sis supports node ids below {MAX_NODES}");
        }
        Ok(t)
    }

    /// LLCs and cores with an online CPU now (an index keeps its place while offline).
    pub fn nr_llcs(&self) -> usize {
        self.llc_nr.iter().filter(|&&n| n > 0).count()
    }

    pub fn nr_cores(&self) -> usize {
        self.core_nr.iter().filter(|&&n| n > 0).count()
    }

    /// How the loader describes it: `N CPUs, N LLCs, N cores, N nodes`.
    pub fn view(&self) -> String {
        format!(
            "{} CPUs, {} LLCs, {} cores, {} nodes",
            self.nr_cpus(),
            self.nr_llcs(),
            self.nr_cores(),
            self.nr_nodes
        )
    }

    /// The constants the verifier prunes on: sized for every possible CPU and every
    /// LLC index the loader may hand out (one per possible CPU at most).
    pub fn write_rodata(&self, ro: &mut rodata) {
        ro.nr_cpu_ids = self.nr_cpu_ids as u32;
        ro.max_llcs = (self.nr_cpu_ids as u32).min(NO_LLC);
        ro.smt_enabled = self.smt;
    }

    /// The arrays the BPF side walks, each built whole and then copied over the old
    /// one, so that a reader never sees a CPU half-moved through an empty state.
    pub fn write_maps(&self, b: &mut bss) {
        fn fill<T: Copy, const N: usize>(dst: &mut [T; N], src: &[T], rest: T) {
            let mut a = [rest; N];
            a[..src.len()].copy_from_slice(src);
            *dst = a;
        }
        fill(&mut b.cpu_node, &self.cpu_node, 0);
        fill(&mut b.cpu_core, &self.cpu_core, 0);
        fill(&mut b.cpu_llc_pos, &self.cpu_llc_pos, 0);
        fill(&mut b.llc_cpus, &self.llc_cpus, 0);
        fill(&mut b.llc_off, &self.llc_off, 0);
        fill(&mut b.llc_nr, &self.llc_nr, 0);
        fill(&mut b.llc_node, &self.llc_node, 0);
        fill(&mut b.core_cpus, &self.core_cpus, 0);
        fill(&mut b.core_off, &self.core_off, 0);
        fill(&mut b.core_nr, &self.core_nr, 0);
        fill(&mut b.node_far, &self.node_far, 0);
        let mut mask = [[0u64; MAX_CPUS / 64]; MAX_LLCS];
        for (llc, (&off, &nr)) in self.llc_off.iter().zip(&self.llc_nr).enumerate() {
            for &cpu in &self.llc_cpus[off as usize..(off + nr) as usize] {
                mask[llc][cpu as usize / 64] |= 1 << (cpu % 64);
            }
        }
        b.llc_mask = mask;
        b.nr_llcs = self.llc_nr.len() as u32;
        // last: a CPU joins (or leaves) its LLC once its lists are in place
        fill(&mut b.cpu_llc, &self.cpu_llc, NO_LLC);
    }
}

/// Every CPU at its hotplug target state (`cpuN/hotplug/state` = `target`): none is
/// on its way on- or offline. True where the kernel has no such files.
fn hotplug_settled() -> Result<bool> {
    for entry in std::fs::read_dir("/sys/devices/system/cpu").context("listing CPUs")? {
        let dir = entry?.path().join("hotplug");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
        if let (Some(state), Some(target)) = (read("state"), read("target")) {
            if state.trim() != target.trim() {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// node_reclaim_distance as x86 sets it: 32 on AMD Zen (family 0x17 and later,
/// init_amd_zen_common()), else RECLAIM_DISTANCE, 30. differs: a Zen model newer than
/// the running kernel knows keeps 30 there.
pub fn node_reclaim_distance() -> u32 {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split(':').nth(1))
            .map(|v| v.trim().to_string())
    };
    let amd = field("vendor_id").as_deref() == Some("AuthenticAMD");
    let family: u32 = field("cpu family")
        .and_then(|f| f.parse().ok())
        .unwrap_or(0);
    if amd && family >= 0x17 {
        32
    } else {
        30
    }
}

/// The SLIT distance between every two online nodes: (node, node, distance).
fn node_distances() -> Result<Vec<(usize, usize, u32)>> {
    let dir = "/sys/devices/system/node";
    let Ok(online) = std::fs::read_to_string(format!("{dir}/online")) else {
        return Ok(Vec::new()); // no NUMA support: one node
    };
    let nodes = parse_cpu_list(online.trim()).context("parsing the online nodes")?;
    let mut v = Vec::new();
    for &n in &nodes {
        let path = format!("{dir}/node{n}/distance");
        let s = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        let row: Vec<&str> = s.split_whitespace().collect();
        anyhow::ensure!(
            row.len() == nodes.len(),
            "{path} lists {} distances for {} online nodes",
            row.len(),
            nodes.len()
        );
        for (&m, d) in nodes.iter().zip(row) {
            v.push((n, m, d.parse().with_context(|| format!("parsing {path}"))?));
        }
    }
    Ok(v)
}

/// sd_init(): a NUMA level beyond node_reclaim_distance has no SD_WAKE_AFFINE or
/// SD_BALANCE_FORK; the lowest level spanning two nodes is at their distance.
pub fn far_nodes(dist: &[(usize, usize, u32)], reclaim: u32) -> Vec<u64> {
    let mut far = vec![0u64; MAX_NODES];
    for &(n, m, d) in dist {
        if n != m && n < MAX_NODES && m < MAX_NODES && d > reclaim {
            far[n] |= 1 << m;
        }
    }
    far
}

/// /sys/devices/system/cpu/online, as CPU ids.
pub fn online_cpus() -> Result<Vec<usize>> {
    let path = "/sys/devices/system/cpu/online";
    let s = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    parse_cpu_list(s.trim()).with_context(|| format!("parsing {path}: {s:?}"))
}

/// A kernel CPU list (`0-3,5,7-9`).
fn parse_cpu_list(s: &str) -> Result<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.parse()?, b.parse()?);
        cpus.extend(a..=b);
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_nodes_beyond_reclaim_distance() {
        // four nodes as a 4-socket machine: 21 to the neighbours, 31 across
        let d = [
            [10, 21, 31, 21],
            [21, 10, 21, 31],
            [31, 21, 10, 21],
            [21, 31, 21, 10],
        ];
        let dist: Vec<_> = (0..4)
            .flat_map(|n| (0..4).map(move |m| (n, m, d[n][m])))
            .collect();
        let far = far_nodes(&dist, 30);
        assert_eq!(&far[..4], &[0b0100, 0b1000, 0b0001, 0b0010]);
        // at node_reclaim_distance itself a level keeps SD_WAKE_AFFINE
        assert!(far_nodes(&dist, 31).iter().all(|&m| m == 0));
        // AMD Zen's 32 keeps them all within
        assert!(far_nodes(&dist, 32).iter().all(|&m| m == 0));
        assert!(far_nodes(&[], 30).iter().all(|&m| m == 0));
    }

    #[test]
    fn adjacent_siblings_one_llc() {
        // 1:4:2 as qemu numbers it: siblings 0-1, 2-3, ...
        let cpus: Vec<CpuDesc> = (0..8).map(|c| (c, 0, c / 2, 0)).collect();
        let t = SisTopology::build(&cpus, 8, &mut Ids::default()).unwrap();
        assert!(t.smt);
        assert_eq!(t.llc_nr, vec![8]);
        assert_eq!(t.core_nr, vec![2; 4]);
        assert_eq!(&t.core_cpus[..4], &[0, 1, 2, 3]);
        assert_eq!(t.cpu_llc_pos[5], 5);
    }

    #[test]
    fn distant_siblings_two_llcs_offline_cpu() {
        // siblings n and n+4 (Intel style), LLCs {0,1,4,5} and {2,3,6,7}, CPU 3 offline
        let cpus: Vec<CpuDesc> = [0, 1, 2, 4, 5, 6, 7]
            .iter()
            .map(|&c| (c, (c % 4) / 2, c % 4, (c % 4) / 2))
            .collect();
        let t = SisTopology::build(&cpus, 8, &mut Ids::default()).unwrap();
        assert_eq!(t.nr_cpu_ids, 8);
        assert_eq!(t.llc_nr, vec![4, 3]);
        assert_eq!(&t.llc_cpus[..4], &[0, 1, 4, 5]);
        assert_eq!(&t.llc_cpus[4..], &[2, 6, 7]);
        assert_eq!(t.cpu_llc[3], NO_LLC);
        assert_eq!(t.cpu_core[0], t.cpu_core[4]);
        assert_ne!(t.cpu_core[0], t.cpu_core[1]);
        assert_eq!(t.nr_nodes, 2);
        assert!(t.smt);
    }

    #[test]
    fn no_smt() {
        let cpus: Vec<CpuDesc> = (0..4).map(|c| (c, 0, c, 0)).collect();
        assert!(
            !SisTopology::build(&cpus, 4, &mut Ids::default())
                .unwrap()
                .smt
        );
    }

    #[test]
    fn highest_cpus_offline_stay_known_as_no_llc() {
        // CPUs 6 and 7 offline at load: they may come online before the restart, so
        // they keep their ids (and DSQs) with no LLC.
        let cpus: Vec<CpuDesc> = (0..6).map(|c| (c, 0, c / 2, 0)).collect();
        let t = SisTopology::build(&cpus, 8, &mut Ids::default()).unwrap();
        assert_eq!(t.nr_cpu_ids, 8);
        assert_eq!(t.nr_cpus(), 6);
        assert_eq!(&t.cpu_llc[6..], &[NO_LLC, NO_LLC]);
        assert!(SisTopology::build(&[], 8, &mut Ids::default()).is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,5,7-8").unwrap(),
            vec![0, 1, 2, 3, 5, 7, 8]
        );
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert!(parse_cpu_list("0-x").is_err());
    }

    #[test]
    fn a_reread_keeps_every_llc_and_core_index() {
        // 2 LLCs of 2 cores x 2 threads; the first LLC (keys 10) goes offline whole,
        // then comes back; a third LLC appears later
        let all: Vec<CpuDesc> = (0..8).map(|c| (c, 10 + c / 4, c / 2, 0)).collect();
        let mut ids = Ids::default();
        let t0 = SisTopology::build(&all, 12, &mut ids).unwrap();
        assert_eq!((t0.cpu_llc[0], t0.cpu_llc[4]), (0, 1));
        let half: Vec<CpuDesc> = all[4..].to_vec();
        let t1 = SisTopology::build(&half, 12, &mut ids).unwrap();
        assert_eq!(t1.cpu_llc[4], 1, "the second LLC keeps its index");
        assert_eq!(t1.cpu_llc[0], NO_LLC);
        assert_eq!(t1.llc_nr, vec![0, 4]);
        assert_eq!((t1.nr_llcs(), t1.nr_cores(), t1.nr_cpus()), (1, 2, 4));
        assert_eq!(t1.cpu_core[4], t0.cpu_core[4]);
        assert_eq!(t1.view(), "4 CPUs, 1 LLCs, 2 cores, 1 nodes");
        let more: Vec<CpuDesc> = all.iter().copied().chain([(8, 5, 4, 0)]).collect();
        let t2 = SisTopology::build(&more, 12, &mut ids).unwrap();
        assert_eq!(&t2.cpu_llc[..9], &[0, 0, 0, 0, 1, 1, 1, 1, 2]);
        assert_eq!(t2.cpu_core[..8], t0.cpu_core[..8]);
        assert_eq!(t2.nr_llcs(), 3);
    }
}
