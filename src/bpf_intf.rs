// SPDX-License-Identifier: GPL-2.0-only
#![allow(non_upper_case_globals)]
#![allow(non_camel_case_types)]
#![allow(non_snake_case)]
#![allow(dead_code)]

include!(concat!(env!("OUT_DIR"), "/bpf_intf.rs"));

/// The intf.h structs the loader copies to and from map values: integers only, no
/// padding, so every bit pattern is valid.
///
/// # Safety
/// Implement only for `#[repr(C)]` structs of integers without padding.
pub unsafe trait Pod: Copy {}
// SAFETY: two u64s
unsafe impl Pod for sis_ctl {}
// SAFETY: u64s and arrays of u64s
unsafe impl Pod for sis_cpu_stats {}
// SAFETY: seven u64s and two u32s
unsafe impl Pod for sis_sched_avg {}

/// A copy of a `T` from map value bytes; None when they are too short.
pub fn from_bytes<T: Pod>(b: &[u8]) -> Option<T> {
    // SAFETY: T is plain old data (Pod) and b holds at least its size.
    (b.len() >= std::mem::size_of::<T>())
        .then(|| unsafe { std::ptr::read_unaligned(b.as_ptr() as *const T) })
}

/// The bytes of a `T`, for a map update.
pub fn as_bytes<T: Pod>(v: &T) -> &[u8] {
    // SAFETY: T is plain old data without padding (Pod): every byte is initialised.
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) }
}
