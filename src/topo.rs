// SPDX-License-Identifier: GPL-2.0-only
//! The live topology, flattened into the arrays the BPF side walks: each LLC's CPUs
//! in id order (select_idle_cpu wraps over them) and each core's siblings
//! (select_idle_core / select_idle_smt). Any CPU numbering works: siblings need not
//! be adjacent, and offline CPUs are simply absent.

use crate::bpf_intf;
use crate::bpf_skel::types::rodata;
use anyhow::{bail, Context, Result};
use scx_utils::Topology;
use std::collections::BTreeMap;

const MAX_CPUS: usize = bpf_intf::consts_MAX_CPUS as usize;
const MAX_LLCS: usize = bpf_intf::consts_MAX_LLCS as usize;
const MAX_SIBLINGS: usize = bpf_intf::consts_MAX_SIBLINGS as usize;
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
}

/// One online CPU: (cpu, llc key, core key, node).
pub type CpuDesc = (usize, usize, usize, usize);

impl SisTopology {
    /// Read sysfs; a CPU going on- or offline meanwhile makes its files vanish, so a
    /// failed read is retried for up to a second (a restart after hotplug races with
    /// the next hotplug event).
    pub fn read() -> Result<Self> {
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
        let cpus: Vec<CpuDesc> = t
            .all_cpus
            .values()
            .map(|c| (c.id, c.llc_id, c.core_id, c.node_id))
            .collect();
        let possible = libbpf_rs::num_possible_cpus().context("reading the possible CPUs")?;
        Self::build(&cpus, possible)
    }

    pub fn nr_cpus(&self) -> usize {
        self.llc_cpus.len()
    }

    /// Flatten a CPU list. LLC and core keys are compacted to 0.. in key order.
    /// `possible`: the kernel's possible CPUs, so that every CPU that may come online
    /// before the hotplug restart has its DSQ and a known (NO_LLC) place.
    pub fn build(cpus: &[CpuDesc], possible: usize) -> Result<Self> {
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
        if llcs.len() >= MAX_LLCS {
            bail!(
                "{} LLCs: scx_sis supports at most {}",
                llcs.len(),
                MAX_LLCS - 1
            );
        }
        for (idx, (_, mut list)) in llcs.into_iter().enumerate() {
            list.sort_unstable();
            t.llc_off.push(t.llc_cpus.len() as u32);
            t.llc_nr.push(list.len() as u32);
            t.llc_node.push(t.cpu_node[list[0]]);
            for (pos, cpu) in list.into_iter().enumerate() {
                t.cpu_llc[cpu] = idx as u32;
                t.cpu_llc_pos[cpu] = pos as u32;
                t.llc_cpus.push(cpu as u32);
            }
        }
        for (idx, (_, mut sibs)) in cores.into_iter().enumerate() {
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
                t.cpu_core[cpu] = idx as u32;
                t.core_cpus.push(cpu as u32);
            }
        }
        let mut nodes: Vec<u32> = t.llc_node.clone();
        nodes.sort_unstable();
        nodes.dedup();
        t.nr_nodes = nodes.len();
        Ok(t)
    }

    pub fn write_rodata(&self, ro: &mut rodata) {
        fn fill(dst: &mut [u32], src: &[u32]) {
            dst[..src.len()].copy_from_slice(src);
        }
        ro.nr_cpu_ids = self.nr_cpu_ids as u32;
        ro.nr_llcs = self.llc_nr.len() as u32;
        ro.smt_enabled = self.smt;
        ro.cpu_llc.fill(NO_LLC);
        fill(&mut ro.cpu_llc, &self.cpu_llc);
        fill(&mut ro.cpu_node, &self.cpu_node);
        fill(&mut ro.cpu_core, &self.cpu_core);
        fill(&mut ro.cpu_llc_pos, &self.cpu_llc_pos);
        fill(&mut ro.llc_cpus, &self.llc_cpus);
        fill(&mut ro.llc_off, &self.llc_off);
        fill(&mut ro.llc_nr, &self.llc_nr);
        fill(&mut ro.llc_node, &self.llc_node);
        fill(&mut ro.core_cpus, &self.core_cpus);
        fill(&mut ro.core_off, &self.core_off);
        fill(&mut ro.core_nr, &self.core_nr);
        for (llc, (&off, &nr)) in self.llc_off.iter().zip(&self.llc_nr).enumerate() {
            for &cpu in &self.llc_cpus[off as usize..(off + nr) as usize] {
                ro.llc_mask[llc][cpu as usize / 64] |= 1 << (cpu % 64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_siblings_one_llc() {
        // 1:4:2 as qemu numbers it: siblings 0-1, 2-3, ...
        let cpus: Vec<CpuDesc> = (0..8).map(|c| (c, 0, c / 2, 0)).collect();
        let t = SisTopology::build(&cpus, 8).unwrap();
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
        let t = SisTopology::build(&cpus, 8).unwrap();
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
        assert!(!SisTopology::build(&cpus, 4).unwrap().smt);
    }

    #[test]
    fn highest_cpus_offline_stay_known_as_no_llc() {
        // CPUs 6 and 7 offline at load: they may come online before the restart, so
        // they keep their ids (and DSQs) with no LLC.
        let cpus: Vec<CpuDesc> = (0..6).map(|c| (c, 0, c / 2, 0)).collect();
        let t = SisTopology::build(&cpus, 8).unwrap();
        assert_eq!(t.nr_cpu_ids, 8);
        assert_eq!(t.nr_cpus(), 6);
        assert_eq!(&t.cpu_llc[6..], &[NO_LLC, NO_LLC]);
        assert!(SisTopology::build(&[], 8).is_err());
    }
}
