#pragma once
// The last fallback of a lookup: one sane config per kernel family, used when the database holds
// no successful result of the requested element type on any device.
//
// Why a table compiled into the lookup library rather than rows the tuner writes: an application
// must get an answer from an empty database, from one that only holds imported results, or from
// one written by an older tuner, and the library must not link kernels/ to ask the family.
// tests/unit/test_builtin_defaults.cpp keeps the table honest: every family registered in
// kernels/ needs an entry here, and its space must accept the config.
#include <string_view>

namespace cutune::db {

struct BuiltinDefault {
  std::string_view family;
  std::string_view config;  // canonical "name=value,…", labels for labelled axes
};

inline constexpr BuiltinDefault kBuiltinDefaults[] = {
    // One pass over the data (decoupled look-back) reads each input once; 2048 elements per tile
    // in 256 threads, 16-byte loads for int32, staging padded against bank conflicts. About 17 KiB
    // of shared memory per block, so it is legal on every architecture the tuner supports.
    {"scan", "algo=lookback,block=256,ept=8,vec=4,pad=1"},
    // One pass with a last-block finish (no second launch, no float atomics' nondeterminism),
    // 16-byte loads, shuffle finish.
    {"reduce", "block=256,ept=16,vec=4,finish=shuffle,fold=1,pad=0,pass=lastblock,preset=memset"},
    // 16-byte accesses, four per thread: near the copy ceiling on every recent GPU.
    {"copy", "block=256,ept=4,vec=4"},
    // A warp per window coalesces for any k; no staging needed.
    {"resample", "map=warp,block=256,wpt=1,stage=0,vec=1,pad=0"},
    // Each pair once for both sums, log d shared across exponents: the least double arithmetic.
    {"powersum", "map=sym,block=256,fold=1,stage=global,ksplit=1,jt=4,term=explog"},
    // Averages at copy speed with 16-byte loads, then the tiled product.
    {"avgmatvec", "fuse=split,reduce=warp,block=256,ept=4,vec=4,pdl=off"},
    // The register-tiled kernel: 128x128 block tile, 8x8 per thread, float4 loads.
    {"matmul",
     "algo=regtile,tile=128,ept=8,pad=0,vec=4,minblocks=1,bk=8,splitk=1,"
     "shape=square,warp_rows=4,stages=2,swizzle=0,raster=1,transpose=0,streamk=0"},
};

inline const BuiltinDefault* builtin_default(std::string_view family) {
  for (const auto& entry : kBuiltinDefaults)
    if (entry.family == family) return &entry;
  return nullptr;
}

}  // namespace cutune::db
