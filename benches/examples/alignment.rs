//! Times one tiled copy with its source and destination placed at every 16-byte position in
//! a cache line: `cargo run --release -p benches --example alignment -- [PERM] [TYPE]`, where
//! PERM is `10` (the 4096 x 4096 transpose) or a permutation of three axes of a 256^3 block
//! (`201`), and TYPE one of `u8`, `u16`, `f32`, `f64`. Prints the best of 5 runs of each
//! placement (milliseconds) and of a `copy_from_slice` of the same bytes between other
//! buffers, which runs before each of them (as in the benchmark's table); set
//! `RAYON_NUM_THREADS=1` to time one thread.

use std::time::Instant;
use symshape_kernels::{copy, ConcreteStack, ConcreteView, Element, Input, Output};
use symshape_view::Op;

fn main() {
    let perm = std::env::args().nth(1).unwrap_or_else(|| "10".into());
    match std::env::args().nth(2).as_deref().unwrap_or("u8") {
        "u16" => time::<u16>(&perm),
        "f32" => time::<f32>(&perm),
        "f64" => time::<f64>(&perm),
        _ => time::<u8>(&perm),
    }
}

fn time<T: Element + From<u8>>(perm: &str) {
    let perm: Vec<usize> = perm
        .bytes()
        .map(|c| usize::from(c.wrapping_sub(b'0')))
        .collect();
    let shape: Vec<i64> = if perm.len() == 2 {
        vec![4096, 4096]
    } else {
        vec![256; 3]
    };
    let n = 1usize << 24;
    let block = ConcreteView::contiguous(&shape).expect("shape");
    let view = ConcreteStack::from(
        block
            .apply(&Op::Permute(perm.clone()))
            .expect("a permutation of the axes"),
    );
    let dst = ConcreteView::contiguous(&shape).expect("shape");
    let size = std::mem::size_of::<T>();
    let pad = 128 / size;
    let src: Vec<T> = (0..n + pad).map(|i| T::from((i % 251) as u8)).collect();
    let mut out = vec![T::ZERO; n + pad];
    let (spare, mut base) = (src[..n].to_vec(), vec![T::ZERO; n]);
    let (s0, d0) = (src.as_ptr().align_offset(64), out.as_ptr().align_offset(64));
    let places = [0, 16, 32, 48];
    let mut best = [[f64::MAX; 4]; 4];
    let mut memcpy = f64::MAX;
    for _ in 0..5 {
        for (i, &ps) in places.iter().enumerate() {
            for (j, &pd) in places.iter().enumerate() {
                let (s, d) = (s0 + ps / size, d0 + pd / size);
                // The baseline copy between runs, as in the benchmark's table: it also
                // evicts the last run's buffers from the caches.
                let t = Instant::now();
                base.copy_from_slice(std::hint::black_box(&spare[..n]));
                std::hint::black_box(&mut base);
                memcpy = memcpy.min(t.elapsed().as_secs_f64() * 1e3);
                let t = Instant::now();
                copy(
                    Input::new(&src[s..s + n], &view),
                    Output::new(&mut out[d..d + n], &dst),
                )
                .expect("copy");
                best[i][j] = best[i][j].min(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    println!("{perm:?} {}: copy_from_slice {memcpy:.2} ms", T::NAME);
    println!("source \\ destination bytes past a line: 0 16 32 48");
    for (row, &ps) in best.iter().zip(&places) {
        let cells: Vec<String> = row.iter().map(|x| format!("{x:.2}")).collect();
        println!("{ps:>2}: {}", cells.join(" "));
    }
}
