//! PFSELFTEST: checks the register packing and the estimator of this build, as Redis's does
//! of its own (its answer is OK or a TESTFAILED error; the checks themselves are ours).

use super::sketch::{self, DENSE_LEN, HDR, REGISTERS};

/// A small deterministic generator (xorshift64*), so a failure can be reproduced.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

pub fn run() -> Result<(), String> {
    registers_round_trip()?;
    sparse_matches_dense()?;
    estimate_within_bounds()
}

/// Random values written into every packed register read back unchanged, and writing one
/// register never disturbs its neighbours.
fn registers_round_trip() -> Result<(), String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut regs = vec![0u8; DENSE_LEN - HDR];
    let mut want = vec![0u8; REGISTERS];
    for _ in 0..100 {
        for (i, w) in want.iter_mut().enumerate() {
            *w = (rng.next() & 63) as u8;
            sketch::dense_set(&mut regs, i, *w);
        }
        for (i, &w) in want.iter().enumerate() {
            if sketch::dense_get(&regs, i) != w {
                return Err(format!("Register error at {i}"));
            }
        }
    }
    Ok(())
}

/// The same elements added to a sparse and to a dense value give the same registers and
/// the same count, through the sparse value's promotion.
fn sparse_matches_dense() -> Result<(), String> {
    let mut sparse = sketch::new_sparse();
    let mut dense = sketch::new_sparse();
    sketch::to_dense(&mut dense).ok_or("dense conversion failed")?;
    for n in 0..20_000u32 {
        let elem = n.to_string();
        let a = sketch::add(&mut sparse, elem.as_bytes(), 3000).ok_or("sparse add failed")?;
        let b = sketch::add(&mut dense, elem.as_bytes(), 3000).ok_or("dense add failed")?;
        if a != b {
            return Err(format!("Sparse and dense disagree at element {n}"));
        }
        if n % 500 == 0 && sketch::count(&sparse) != sketch::count(&dense) {
            return Err(format!("Sparse and dense counts differ at element {n}"));
        }
    }
    let mut converted = sparse.clone();
    sketch::to_dense(&mut converted).ok_or("dense conversion failed")?;
    if converted[HDR..] != dense[HDR..] {
        return Err("Sparse and dense registers differ".into());
    }
    Ok(())
}

/// The estimate stays within five standard errors (1.04/sqrt(m)) of the truth.
fn estimate_within_bounds() -> Result<(), String> {
    let mut v = sketch::new_sparse();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let mut checkpoint = 1u64;
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for j in 1..=1_000_000u64 {
        sketch::add(&mut v, &rng.next().to_le_bytes(), 3000).ok_or("add failed")?;
        if j == checkpoint {
            let abserr = checkpoint as f64 * relerr * 5.0;
            let count = sketch::count(&v).ok_or("count failed")? as f64;
            if (count - j as f64).abs() > abserr.max(1.0) + 1.0 {
                return Err(format!("Approximation error at {j}: {count}"));
            }
            checkpoint *= 10;
        }
    }
    Ok(())
}
