// SPDX-License-Identifier: GPL-2.0-only
include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
