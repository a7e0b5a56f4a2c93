include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
