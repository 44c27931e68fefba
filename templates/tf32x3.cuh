// 3xTF32 on the tensor cores (sm_80 and newer): an fp32 product as three TF32 products. TF32 keeps
// 10 of fp32's 23 mantissa bits, so each operand x is split into hi = x rounded to TF32 and
// lo = (x - hi) rounded to TF32, |x - hi - lo| <= 2^-22 |x|, and a product is lo*hi + hi*lo + hi*hi
// (lo*lo, about 2^-22 of it, is left out). This is CUTLASS's "3xTF32". The families whose kernels
// use it (matmul's tf32x3, avgmatvec's tc forms) place this file in front of their template
// (Family::template_headers); functions a config never calls emit no code.
//
// The tensor cores' fp32 additions are not rounded to nearest: sums that the mma's C operand
// carries across many steps drift (at k = 4096, 4.6e-5 where fp32 FFMA sums err by 4e-6). The
// kernels sum a few steps on the tensor cores from zero and add those to their running sums by FADD.

// x = hi + lo + e, hi and lo TF32 values (fp32 with the low 13 mantissa bits zero), each rounded to
// nearest (ties away) by adding half of the dropped part. Integer adds and masks: full-rate, where
// cvt.rna.tf32.f32 is not.
__device__ __forceinline__ void split_tf32(float x, unsigned& hi, unsigned& lo) {
  hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  lo = (__float_as_uint(x - __uint_as_float(hi)) + 0x1000u) & 0xffffe000u;
}

// (d0, d1, d2, d3) += a b for one m16n8k8 tile: a the A fragment (rows g, g + 8 at k slots t, then
// t + 4), b0 and b1 the B fragment (k slots t and t + 4 of column g), d rows g and g + 8 at
// columns 2t and 2t + 1 (g = lane / 4, t = lane % 4). Not volatile: the compiler may interleave
// independent ones.
__device__ __forceinline__ void mma_tf32(float& d0, float& d1, float& d2, float& d3, const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
