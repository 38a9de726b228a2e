//! The dlpack feature: results exported and read back, hand-built tensors over Rust buffers
//! against a naive element-by-element gather, and the refusals of malformed tensors.

use crate::reference as r;
use proptest::prelude::*;
use symshape_kernels::dlpack::dlpark::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLTensor,
};
use symshape_kernels::dlpack::dlpark::DlpackFlags;
use symshape_kernels::dlpack::{self, DlpackType};
use symshape_kernels::{bf16, f16, Dense, Element};

/// The fields of a DLPack tensor over a Rust buffer; [`Raw::tensor`] points into them.
#[derive(Debug, Clone)]
struct Raw {
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
    byte_offset: u64,
    dtype: Option<DLDataType>,
    device: DLDevice,
    ndim: Option<i32>,
}

impl Raw {
    fn new(shape: &[i64], strides: Option<&[i64]>, byte_offset: u64) -> Raw {
        Raw {
            shape: shape.to_vec(),
            strides: strides.map(<[i64]>::to_vec),
            byte_offset,
            dtype: None,
            device: DLDevice::CPU,
            ndim: None,
        }
    }

    /// A tensor of `T` (unless the dtype was overridden) whose data pointer is `data`.
    fn tensor<T: DlpackType>(&self, data: *const T) -> DLTensor {
        DLTensor {
            data: data.cast_mut().cast(),
            device: self.device,
            ndim: self.ndim.unwrap_or(self.shape.len() as i32),
            dtype: self.dtype.unwrap_or(T::DTYPE),
            shape: self.shape.as_ptr().cast_mut(),
            strides: self
                .strides
                .as_ref()
                .map_or(std::ptr::null_mut(), |s| s.as_ptr().cast_mut()),
            byte_offset: self.byte_offset,
        }
    }

    /// Explicit strides: the given ones, or row-major ones written out.
    fn strides_or_row_major(&self) -> Vec<i64> {
        self.strides.clone().unwrap_or_else(|| {
            let mut res = vec![0i64; self.shape.len()];
            let mut acc = 1i64;
            for k in (0..self.shape.len()).rev() {
                res[k] = acc;
                acc *= self.shape[k].max(1);
            }
            res
        })
    }

    /// Element offsets from the data pointer of every index of the shape, row-major: the
    /// explicit index table of the reference.
    fn offsets(&self, elem: usize) -> Vec<i64> {
        let dims: Vec<usize> = self.shape.iter().map(|&n| n as usize).collect();
        let strides = self.strides_or_row_major();
        r::indices(&dims)
            .iter()
            .map(|idx| {
                let zero = (self.byte_offset / elem as u64) as i64;
                idx.iter()
                    .zip(&strides)
                    .fold(zero, |acc, (&i, &s)| acc + i as i64 * s)
            })
            .collect()
    }
}

/// The reference: each element gathered one by one from `buf` through the index table.
fn gather<T: Element>(raw: &Raw, buf: &[T]) -> Vec<T> {
    raw.offsets(std::mem::size_of::<T>())
        .iter()
        .map(|&o| buf[usize::try_from(o).expect("reference offset below the buffer")])
        .collect()
}

/// Reads `raw` over `buf` through the crate and checks it against the reference: same values,
/// and a slice that starts at the lowest element reached and ends at the highest.
fn check_against_gather<T: DlpackType>(raw: &Raw, buf: &[T]) {
    let t = raw.tensor(buf.as_ptr());
    // SAFETY: the shape and strides live in `raw`; every offset of the table lies in `buf`
    // (the reference indexes it), which nobody writes meanwhile.
    let (slice, view) = unsafe { dlpack::source::<T>(&t) }.unwrap();
    // SAFETY: as above.
    let got = unsafe { dlpack::materialize::<T>(&t) }.unwrap();
    let want = gather(raw, buf);
    assert_eq!(got.values, want, "{raw:?} read as {view}");
    let dims: Vec<usize> = raw.shape.iter().map(|&n| n as usize).collect();
    assert_eq!(got.shape, dims);
    let offsets = raw.offsets(std::mem::size_of::<T>());
    match (offsets.iter().min(), offsets.iter().max()) {
        (Some(&lo), Some(&hi)) => {
            assert_eq!(slice.len() as i64, hi - lo + 1, "{raw:?}");
            assert_eq!(slice.as_ptr(), buf[lo as usize..].as_ptr(), "{raw:?}");
        }
        _ => assert!(slice.is_empty()),
    }
}

fn iota<T: Copy>(n: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    (0..n).map(f).collect()
}

/// Export, read back, materialize: the same shape and values, with the metadata DLPack asks.
fn round_trip<T: DlpackType>(shape: &[usize], f: impl Fn(usize) -> T) {
    let n = shape.iter().product();
    let dense = Dense {
        shape: shape.to_vec(),
        values: iota(n, f),
    };
    let tensor = dense.clone().into_dlpack().unwrap();
    let meta = tensor.validate_export().unwrap();
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    assert_eq!(meta.shape(), dims.as_slice());
    assert_eq!(meta.dtype(), T::DTYPE);
    assert_eq!(meta.device(), DLDevice::CPU);
    assert_eq!(meta.byte_offset(), 0);
    assert!(meta.is_compact().unwrap());
    assert_eq!(tensor.flags(), DlpackFlags::IS_COPIED);
    // SAFETY: the tensor owns its values and is not written while read.
    let back = unsafe { dlpack::materialize_managed::<T, _>(&tensor) }.unwrap();
    assert_eq!(back, dense, "versioned {shape:?} of {}", T::NAME);
    let legacy = dense.clone().into_dlpack_legacy().unwrap();
    // SAFETY: as above.
    let back = unsafe { dlpack::materialize_managed::<T, _>(&legacy) }.unwrap();
    assert_eq!(back, dense, "legacy {shape:?} of {}", T::NAME);
}

const SHAPES: &[&[usize]] = &[
    &[],
    &[0],
    &[1],
    &[7],
    &[2, 3],
    &[3, 0, 2],
    &[2, 3, 4],
    &[1, 1, 5],
];

#[test]
fn round_trips() {
    for &shape in SHAPES {
        round_trip::<f32>(shape, |i| i as f32 * 0.5 - 3.0);
        round_trip::<f64>(shape, |i| -(i as f64) / 3.0);
        round_trip::<i8>(shape, |i| i as i8 - 5);
        round_trip::<i16>(shape, |i| i as i16 * -300);
        round_trip::<i32>(shape, |i| i as i32 * 1000 - 7);
        round_trip::<i64>(shape, |i| (i as i64) << 40);
        round_trip::<isize>(shape, |i| -(i as isize));
        round_trip::<u8>(shape, |i| i as u8 * 9);
        round_trip::<u16>(shape, |i| i as u16 * 700);
        round_trip::<u32>(shape, |i| i as u32 * 70_000);
        round_trip::<u64>(shape, |i| u64::MAX - i as u64);
        round_trip::<usize>(shape, |i| i * 3);
        round_trip::<bool>(shape, |i| i % 3 == 1);
        round_trip::<f16>(shape, |i| f16::from_f32(i as f32 * 0.25 - 2.0));
        round_trip::<bf16>(shape, |i| bf16::from_f32(-(i as f32) * 8.5));
    }
}

#[test]
fn half_precision_dtypes_are_float16_and_bfloat16() {
    assert_eq!(f16::DTYPE, DLDataType::new(DLDataTypeCode::FLOAT, 16, 1));
    assert_eq!(bf16::DTYPE, DLDataType::new(DLDataTypeCode::BFLOAT, 16, 1));
    let buf: Vec<bf16> = iota(24, |i| bf16::from_f32(i as f32 - 0.5));
    check_against_gather(&Raw::new(&[3, 4], Some(&[-1, 5]), 2 * 2), &buf);
    // A float16 tensor is not read as bfloat16, nor the other way round.
    let halves: Vec<f16> = iota(6, |i| f16::from_f32(i as f32));
    let mut raw = Raw::new(&[2, 3], None, 0);
    raw.dtype = Some(f16::DTYPE);
    insta::assert_snapshot!(refusal::<bf16>(&raw, halves.as_ptr().cast()), @"from_dlpack: dlpack tensor of shape [2, 3] with strides null has dtype float16 but bf16 (bfloat16) was asked for");
    raw.dtype = Some(bf16::DTYPE);
    insta::assert_snapshot!(refusal::<f16>(&raw, halves.as_ptr()), @"from_dlpack: dlpack tensor of shape [2, 3] with strides null has dtype bfloat16 but f16 (float16) was asked for");
}

#[test]
fn exported_data_pointer_is_the_values_and_empty_is_null() {
    let values = vec![1u16, 2, 3, 4, 5, 6];
    let ptr = values.as_ptr();
    let tensor = Dense {
        shape: vec![3, 2],
        values,
    }
    .into_dlpack()
    .unwrap();
    let meta = tensor.validate().unwrap();
    assert_eq!(meta.data_ptr().cast::<u16>(), ptr, "no copy on export");
    assert_eq!(meta.strides(), Some([2i64, 1].as_slice()));
    let empty = Dense::<u16> {
        shape: vec![4, 0],
        values: vec![],
    }
    .into_dlpack()
    .unwrap();
    assert!(empty.validate().unwrap().data_ptr().is_null());
}

#[test]
fn hand_built_layouts() {
    let buf: Vec<i32> = iota(64, |i| i as i32 * 10);
    let cases = [
        // Row-major, explicit and null strides.
        Raw::new(&[3, 4], Some(&[4, 1]), 0),
        Raw::new(&[3, 4], None, 0),
        // Transposed, and with a byte offset.
        Raw::new(&[4, 3], Some(&[1, 4]), 0),
        Raw::new(&[4, 3], Some(&[1, 4]), 8),
        // Flipped rows and columns: index zero at the last element.
        Raw::new(&[3, 4], Some(&[-4, -1]), 11 * 4),
        Raw::new(&[3, 4], Some(&[4, -1]), 3 * 4),
        // Stepped and broadcast axes.
        Raw::new(&[3, 2], Some(&[8, 3]), 4),
        Raw::new(&[2, 3, 4], Some(&[0, 1, 0]), 5 * 4),
        Raw::new(&[5], Some(&[0]), 20),
        // Size-one axes with arbitrary strides, as PyTorch produces.
        Raw::new(&[1, 4, 1], Some(&[i64::MAX, 2, i64::MIN]), 0),
        // Rank 0: one element at the byte offset; zero-size views.
        Raw::new(&[], None, 7 * 4),
        Raw::new(&[0, 3], Some(&[-3, 1]), 0),
        Raw::new(&[3, 0], None, 0),
        // Overlapping reads.
        Raw::new(&[4, 4], Some(&[1, 1]), 0),
        Raw::new(&[3, 3], Some(&[-2, 3]), 16),
    ];
    for raw in &cases {
        check_against_gather(raw, &buf);
    }
    let bytes: Vec<u8> = iota(40, |i| i as u8);
    check_against_gather(&Raw::new(&[2, 2, 2], Some(&[-9, 13, -1]), 10), &bytes);
    let floats: Vec<f64> = iota(30, |i| i as f64 + 0.25);
    check_against_gather(&Raw::new(&[5, 2], Some(&[-3, 7]), 12 * 8), &floats);
    let flags: Vec<bool> = iota(12, |i| i % 5 == 0);
    check_against_gather(&Raw::new(&[3, 2], Some(&[-2, 5]), 4), &flags);
}

#[test]
fn views_of_hand_built_tensors() {
    // The view reads the slice: its offset is where index zero lies in it.
    let buf: Vec<i32> = iota(20, |i| i as i32);
    let show = |raw: Raw| {
        let t = raw.tensor(buf.as_ptr());
        // SAFETY: every element reached lies in `buf`.
        let (slice, view) = unsafe { dlpack::source::<i32>(&t) }.unwrap();
        format!("{view} over {:?}", slice)
    };
    insta::assert_snapshot!(show(Raw::new(&[2, 3], Some(&[-3, -1]), 4 * 10)), @"view shape=[2, 3] strides=[-3, -1] offset=5 mask=none over [5, 6, 7, 8, 9, 10]");
    insta::assert_snapshot!(show(Raw::new(&[2, 2], Some(&[1, 4]), 4 * 3)), @"view shape=[2, 2] strides=[1, 4] offset=0 mask=none over [3, 4, 5, 6, 7, 8]");
    insta::assert_snapshot!(show(Raw::new(&[3], Some(&[0]), 4 * 2)), @"view shape=[3] strides=[0] offset=0 mask=none over [2]");
    insta::assert_snapshot!(show(Raw::new(&[], None, 4)), @"view shape=[] strides=[] offset=0 mask=none over [1]");
    insta::assert_snapshot!(show(Raw::new(&[2, 0], None, 4)), @"view shape=[2, 0] strides=[1, 1] offset=0 mask=none over []");
}

/// The message of an import of `raw` over `data` as `T`, or `ok`.
fn refusal<T: DlpackType>(raw: &Raw, data: *const T) -> String {
    let t = raw.tensor(data);
    // SAFETY: every refused case is refused before its data is read; the accepted ones read
    // within the buffers `data` points into.
    match unsafe { dlpack::source::<T>(&t) } {
        Ok(_) => "ok".to_owned(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn refusals() {
    let buf: Vec<f32> = iota(16, |i| i as f32);
    let p = buf.as_ptr();
    let with = |f: &dyn Fn(&mut Raw)| {
        let mut raw = Raw::new(&[2, 3], Some(&[3, 1]), 0);
        f(&mut raw);
        raw
    };
    insta::assert_snapshot!(refusal(&with(&|_| {}), p), @"ok");
    insta::assert_snapshot!(refusal(&with(&|r| r.device = DLDevice::cuda(1)), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3, 1] is on device CUDA:1; only CPU tensors can be read");
    insta::assert_snapshot!(refusal(&with(&|r| r.device = DLDevice { device_type: DLDeviceType(42), device_id: 0 }), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3, 1] is on device type 42:0; only CPU tensors can be read");
    insta::assert_snapshot!(refusal(&with(&|r| r.dtype = Some(DLDataType::F64)), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3, 1] has dtype float64 but f32 (float32) was asked for");
    insta::assert_snapshot!(refusal(&with(&|r| r.dtype = Some(DLDataType::new(DLDataTypeCode::FLOAT, 32, 4))), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3, 1] has dtype float32x4 but f32 (float32) was asked for");
    insta::assert_snapshot!(refusal(&with(&|r| r.dtype = Some(DLDataType::F8E4M3)), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3, 1] has dtype code 8 bits 8 but f32 (float32) was asked for");
    insta::assert_snapshot!(refusal(&with(&|r| r.ndim = Some(-1)), p), @"from_dlpack: dlpack tensor of shape ? with strides ? has negative ndim -1");
    insta::assert_snapshot!(refusal(&with(&|r| r.shape[1] = -3), p), @"from_dlpack: dlpack tensor of shape [2, -3] with strides [3, 1] has negative size -3 on axis 1");
    insta::assert_snapshot!(refusal(&with(&|r| r.byte_offset = 6), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3, 1] has byte_offset 6 that is not a multiple of the element size 4");
    insta::assert_snapshot!(refusal(&with(&|r| r.strides = Some(vec![-3, 1])), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [-3, 1] reaches element -3 before its data pointer (byte_offset 0, lowest offset -3 from index zero)");
    insta::assert_snapshot!(refusal(&with(&|r| r.strides = Some(vec![i64::MAX, 1])), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [9223372036854775807, 1] reaches offsets whose span exceeds i64");
    insta::assert_snapshot!(refusal(&with(&|r| r.strides = Some(vec![i64::MAX / 3, 1])), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3074457345618258602, 1] spans 3074457345618258605 elements from element 0, past the address range");
    insta::assert_snapshot!(refusal(&with(&|r| r.byte_offset = u64::MAX - 3), p), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3, 1] spans 6 elements from element 4611686018427387903, past the address range");
    insta::assert_snapshot!(refusal(&with(&|r| r.shape = vec![1 << 32, 1 << 32]), p), @"from_dlpack: dlpack tensor of shape [4294967296, 4294967296] with strides [3, 1] has more elements than fit i64");
    insta::assert_snapshot!(refusal(&with(&|r| { r.shape = vec![1 << 40, 1 << 40, 0]; r.strides = None; }), p), @"from_dlpack: dlpack tensor of shape [1099511627776, 1099511627776, 0] with strides null has row-major strides past i64");
    insta::assert_snapshot!(refusal(&with(&|_| {}), std::ptr::null::<f32>()), @"from_dlpack: dlpack tensor of shape [2, 3] with strides [3, 1] has null data but 6 elements");
    // Zero elements: a null pointer is what DLPack asks for.
    insta::assert_snapshot!(refusal(&with(&|r| r.shape[0] = 0), std::ptr::null::<f32>()), @"ok");
    // Misaligned: the data pointer one byte into the buffer.
    let odd = p.cast::<u8>().wrapping_add(1).cast::<f32>();
    insta::assert_snapshot!(refusal(&with(&|r| { r.shape = vec![2]; r.strides = Some(vec![1]); }), odd), @"from_dlpack: dlpack tensor of shape [2] with strides [1] has data not aligned to the 4-byte alignment of f32");
    // A null shape pointer with ndim 2.
    let mut t = with(&|_| {}).tensor(p);
    t.shape = std::ptr::null_mut();
    // SAFETY: refused before anything is read.
    let e = unsafe { dlpack::source::<f32>(&t) }.unwrap_err();
    insta::assert_snapshot!(e, @"from_dlpack: dlpack tensor of shape ? with strides ? has a null shape pointer but ndim 2");
    // Bytes other than 0 and 1 are not bools.
    let bytes = [0u8, 1, 2, 1];
    let raw = Raw::new(&[4], None, 0);
    insta::assert_snapshot!(refusal::<bool>(&raw, bytes.as_ptr().cast()), @"from_dlpack: dlpack tensor of shape [4] with strides null holds byte 2 at element 2 of its extent, which is not a bool");
}

/// The message of an error, or `ok`.
fn msg<T>(r: Result<T, symshape_kernels::Error>) -> String {
    match r {
        Ok(_) => "ok".to_owned(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn export_refusals() {
    let short = Dense {
        shape: vec![2, 3],
        values: vec![1i32; 5],
    };
    insta::assert_snapshot!(msg(short.into_dlpack()), @"into_dlpack: output holds 5 elements but shape [2, 3] needs 6");
    let huge = Dense::<u8> {
        shape: vec![usize::MAX, 0],
        values: vec![],
    };
    insta::assert_snapshot!(msg(huge.into_dlpack_legacy()), @"into_dlpack: shape [18446744073709551615, 0] overflows the address range");
}

/// A random strided layout: shape, strides (or null), and how many elements lie before the
/// lowest element reached and after the highest.
fn layout() -> impl Strategy<Value = (Raw, usize, usize)> {
    (0usize..=4)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(0i64..=4, rank),
                prop::collection::vec(-6i64..=6, rank),
                any::<bool>(),
                0usize..4,
                0usize..4,
            )
        })
        .prop_map(|(shape, strides, null, before, after)| {
            let strides = (!null).then_some(strides);
            (Raw::new(&shape, strides.as_deref(), 0), before, after)
        })
}

/// Lowest and highest element offset of `raw` from index zero (0, 0 when empty).
fn span(raw: &Raw) -> (i64, i64) {
    let offs = raw.offsets(1);
    let lo = offs.iter().copied().min().unwrap_or(0);
    let hi = offs.iter().copied().max().unwrap_or(0);
    (lo, hi)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any layout placed inside a buffer materializes to the element-by-element gather.
    #[test]
    fn random_layouts_match_the_gather((raw, before, after) in layout()) {
        let (lo, hi) = span(&raw);
        let zero = before as i64 - lo;
        let len = (zero + hi + 1) as usize + after;
        let mut raw = raw;
        raw.byte_offset = zero as u64 * 4;
        check_against_gather(&raw, &iota(len, |i| i as i32 * 3 - 50));
        raw.byte_offset = zero as u64 * 8;
        check_against_gather(&raw, &iota(len, |i| i as f64 / 7.0));
        raw.byte_offset = zero as u64 * 2;
        check_against_gather(&raw, &iota(len, |i| i as u16));
    }

    /// Any byte offset: accepted (and equal to the gather) exactly when it is a multiple of the
    /// element size and no element lies before the data pointer; refused otherwise.
    #[test]
    fn random_byte_offsets((raw, _, after) in layout(), byte_offset in 0u64..48) {
        let (lo, hi) = span(&raw);
        let mut raw = raw;
        raw.byte_offset = byte_offset;
        // The buffer reaches past the highest element, so accepted tensors read inside it.
        let len = (byte_offset as i64 / 4 + hi + 1).max(1) as usize + after;
        let buf = iota(len, |i| i as i32);
        let empty = raw.shape.contains(&0);
        let fine = empty || (byte_offset % 4 == 0 && byte_offset as i64 / 4 + lo >= 0);
        let got = refusal(&raw, buf.as_ptr());
        prop_assert_eq!(got == "ok", fine, "{:?}: {}", raw, got);
        if fine {
            check_against_gather(&raw, &buf);
        }
    }

    /// Export then import gives back the values for any shape.
    #[test]
    fn random_round_trips(shape in prop::collection::vec(0usize..=5, 0..=4)) {
        round_trip::<i64>(&shape, |i| i as i64 * 31 - 1000);
    }
}
