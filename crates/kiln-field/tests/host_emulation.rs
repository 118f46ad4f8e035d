//! The kernel headers on the CPU: `host_emulation.cpp` compiles field/*.cuh and curve/*.cuh
//! with the system C++ compiler (field/ptx.cuh emulates each PTX carry instruction there),
//! and every field and curve operation is compared with blstrs on random and edge inputs.
//! This catches arithmetic bugs in CI without a GPU; the GPU tests (tests/gpu.rs) then check
//! the real PTX. Skipped, visibly, when no C++ compiler is installed.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use ff::{Field, PrimeField};
use group::Group;
use kiln_field::{DeviceLayout, Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

/// Compiles the driver (one binary per test: tests run in parallel).
fn driver(test: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kiln_host_emulation_{test}"));
    // The headers live with the crate that compiles them, which says where (its packaged folder).
    let kernels = PathBuf::from(kiln_kernels::SOURCE_DIR);
    for cxx in ["c++", "g++", "clang++"] {
        let status = Command::new(cxx)
            .args(["-O2", "-std=c++17", "-x", "c++", "-I"])
            .arg(&kernels)
            .arg(dir.join("tests/host_emulation.cpp"))
            .arg("-o")
            .arg(&out)
            .status();
        if let Ok(s) = status {
            assert!(s.success(), "{cxx} failed to compile the kernel headers for the host (see its output above)");
            return Some(out);
        }
    }
    let _ = writeln!(std::io::stderr(), "host_emulation: skipped: no C++ compiler (c++, g++, clang++) found");
    None
}

/// Runs the driver on `lines` ("kind op words..."), returns one word vector per line.
fn run(exe: &PathBuf, lines: &[String]) -> Vec<Vec<u64>> {
    let mut child = Command::new(exe).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let input = lines.join("\n");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "driver exited with {}", out.status);
    let text = String::from_utf8(out.stdout).unwrap();
    let res: Vec<Vec<u64>> =
        text.lines().map(|l| l.split_whitespace().map(|w| u64::from_str_radix(w, 16).unwrap()).collect()).collect();
    assert_eq!(res.len(), lines.len(), "driver answered {} of {} lines", res.len(), lines.len());
    res
}

fn words<T: DeviceLayout>(x: &T) -> Vec<u64> {
    T::as_u64s(std::slice::from_ref(x)).to_vec()
}

fn line(kind: &str, op: u32, parts: &[Vec<u64>]) -> String {
    let mut s = format!("{kind} {op}");
    for p in parts {
        for w in p {
            s += &format!(" {w:x}");
        }
    }
    s
}

fn two_pow<F: Field>(bits: u64) -> F {
    F::ONE.double().pow_vartime([bits])
}

fn from_plain<F: Field>(w: &[u64], from_u64: fn(u64) -> F) -> F {
    let base = two_pow::<F>(64);
    w.iter().rev().fold(F::ZERO, |acc, &wi| acc * base + from_u64(wi))
}

fn le_words(b: &[u8]) -> Vec<u64> {
    b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn flag(b: bool, n: usize) -> Vec<u64> {
    let mut v = vec![0; n];
    v[0] = u64::from(b);
    v
}

/// Expected words of field op `op` by blstrs; `to_plain`/`from_plain` convert plain integers.
fn expected<F: Field + DeviceLayout>(
    op: u32,
    a: &F,
    b: &F,
    plain: &dyn Fn(&F) -> Vec<u64>,
    of_plain: &dyn Fn(&[u64]) -> F,
) -> Vec<u64> {
    match op {
        0 => words(&(*a + b)),
        1 => words(&(*a - b)),
        2 => words(&-*a),
        3 => words(&a.double()),
        4 => words(&(*a * b)),
        5 => words(&a.square()),
        6 => words(&a.invert().unwrap_or(F::ZERO)),
        7 => words(&of_plain(&words(a))),
        8 => plain(a),
        9 => words(&a.pow_vartime([words(b)[0] & 0xffff_ffff])),
        10 => flag(a == b, F::WORDS),
        11 => flag(bool::from(a.is_zero()), F::WORDS),
        _ => unreachable!(),
    }
}

fn check_field<F: Field + DeviceLayout + std::fmt::Debug>(
    exe: &PathBuf,
    kind: &str,
    edges: Vec<F>,
    plain: &dyn Fn(&F) -> Vec<u64>,
    of_plain: &dyn Fn(&[u64]) -> F,
) {
    let mut rng = rand::thread_rng();
    let mut pairs: Vec<(F, F)> = edges.iter().flat_map(|x| edges.iter().map(move |y| (*x, *y))).collect();
    pairs.extend((0..300).map(|_| (F::random(&mut rng), F::random(&mut rng))));
    let x = F::random(&mut rng);
    pairs.push((x, x));
    pairs.push((x, -x));
    for op in 0..12 {
        let lines: Vec<String> = pairs.iter().map(|(a, b)| line(kind, op, &[words(a), words(b)])).collect();
        let got = run(exe, &lines);
        for (i, (a, b)) in pairs.iter().enumerate() {
            let want = expected(op, a, b, plain, of_plain);
            assert_eq!(got[i], want, "{kind} op {op} [{i}]: a = {a:?}, b = {b:?}");
        }
    }
}

fn fp_plain(x: &Fp) -> Vec<u64> {
    le_words(&x.to_bytes_le())
}
fn fp_of_plain(w: &[u64]) -> Fp {
    from_plain(w, Fp::from)
}

#[test]
fn field_headers_match_blstrs_on_the_host() {
    let Some(exe) = driver("field") else { return };
    check_field::<Scalar>(
        &exe,
        "fr",
        vec![Scalar::ZERO, Scalar::ONE, -Scalar::ONE, two_pow(256), Scalar::TWO_INV, Scalar::ROOT_OF_UNITY],
        &|x| le_words(&x.to_repr()),
        &|w| from_plain(w, Scalar::from),
    );
    let r_minus_1 = {
        let mut b = [0u8; 48];
        b[..32].copy_from_slice(&(-Scalar::ONE).to_repr());
        Fp::from_bytes_le(&b).unwrap()
    };
    check_field::<Fp>(&exe, "fp", vec![Fp::ZERO, Fp::ONE, -Fp::ONE, two_pow(384), r_minus_1], &fp_plain, &fp_of_plain);
    // Limbs 1 and p - 1 (Montgomery forms of R^-1 and -R^-1): with them fp2_mul's lazy
    // reduction meets its extremes: c0 = a0 b0 - a1 b1 at its most negative before the
    // p·2^383 lift (1·1 - (p-1)^2), unreduced sums a0 + a1 of exactly p and of 2p - 2.
    let limbs_1 = two_pow::<Fp>(384).invert().unwrap();
    let limbs_p_1 = -limbs_1;
    check_field::<Fp2>(
        &exe,
        "fp2",
        vec![
            Fp2::ZERO,
            Fp2::ONE,
            -Fp2::ONE,
            Fp2::new(Fp::ZERO, Fp::ONE),
            Fp2::new(-Fp::ONE, two_pow(384)),
            Fp2::new(limbs_1, limbs_p_1),
            Fp2::new(Fp::ZERO, limbs_p_1),
            Fp2::new(limbs_p_1, limbs_p_1),
        ],
        &|x| [fp_plain(&x.c0()), fp_plain(&x.c1())].concat(),
        &|w| Fp2::new(fp_of_plain(&w[..6]), fp_of_plain(&w[6..])),
    );
}

fn check_curve<G, A>(exe: &PathBuf, kind: &str)
where
    G: Group + DeviceLayout + From<A> + std::fmt::Debug,
    A: DeviceLayout + From<G> + Copy + std::ops::Neg<Output = A>,
{
    let mut rng = rand::thread_rng();
    let p = G::random(&mut rng);
    let inf = G::identity();
    let mut cases: Vec<(G, G)> =
        vec![(inf, inf), (inf, p), (p, inf), (p, p), (p, -p), (p, p.double()), (p.double(), p), (p + p - p, p)];
    cases.extend((0..30).map(|_| (G::random(&mut rng), G::random(&mut rng))));
    for op in 0..10u32 {
        let lines: Vec<String> =
            cases.iter().map(|(a, b)| line(kind, op, &[words(a), words(b), words(&A::from(*b))])).collect();
        let got = run(exe, &lines);
        for (i, (a, b)) in cases.iter().enumerate() {
            let c = G::from(A::from(*b));
            let want = match op {
                0 => *a + c,
                1 | 5 => *a + b,
                2 | 6 => a.double(),
                3 | 7 => -*a,
                4 => G::from(-A::from(*b)),
                8 => c,
                _ => *a + c + c,
            };
            let g = G::from_u64s(&got[i]).unwrap()[0];
            assert_eq!(g, want, "{kind} op {op} [{i}]: words {:x?}", got[i]);
        }
    }
}

#[test]
fn curve_headers_match_blstrs_on_the_host() {
    let Some(exe) = driver("curve") else { return };
    check_curve::<G1Projective, G1Affine>(&exe, "g1");
    check_curve::<G2Projective, G2Affine>(&exe, "g2");
}
