// softmax.cu: softmax and log_softmax along one dim, behind pcs_launch_softmax (kernels.h).
//
// The host hands over a contiguous input seen as [A, K, B] and wants the
// softmax of every line in[a, :, b]. These kernels cover it:
//   vwarp     B == 1, K <= 1024 (512 for float64): G lanes a row, each
//             with one or more 16-byte packs in registers, so the input is
//             read once with vector loads and the reductions take log2(G)
//             shuffles. Rows that are not whole packs on 16-byte boundaries
//             (K = 197) are read as RowParts, a few scalar values around
//             the packs.
//   tiny      B == 1, K <= 32 (160 bytes) off the 16-byte grid: a block's
//             rows move as one run of packs through shared memory.
//   warp      the same rows when input and output sit at different offsets
//             from a 16-byte boundary: one warp per row, K / 32 values a
//             lane (rounded up to a power of two), short rows 4 (or 2) to a
//             warp at a time so their loads overlap.
//             (vwarp, tiny and warp are in softmax_short.cuh.)
//   regs      B == 1, K > 1024, rows read as RowParts of at most 4 packs a
//             thread of the smallest block of 64 to 512 threads that holds
//             them (K <= 16384 in 16 bits, 8192 in float32, 4096 in
//             float64, or 8192 in blocks of 1024 threads when there are
//             more float64 rows than a wave), or of at most 16 packs of a
//             512-thread block when the rows are one wave (K <= 65536 in 16
//             bits, 32768 in float32): one block a row, the row in
//             registers, read once.
//   block     B == 1, the other long rows. Each thread keeps an online
//             (max, sum) pair over its strided share of the row, the pairs
//             are merged across the block, and a second pass writes. A row
//             of up to 64 KiB is kept in shared memory by the first pass, so
//             the input is read once; longer rows are read twice, the second
//             time mostly from L2 (the blocks in flight touch a few tens of
//             MiB, H100 has 50). Any K and any offset reads 16-byte packs:
//             a row's few values before its first 16-byte boundary and
//             after its last whole pack are read one at a time (RowParts).
//   split     B == 1, long rows too few to fill the GPU a block a row:
//             S blocks a row. The first kernel writes each chunk's online
//             pair to the caller's workspace; the second merges the row's S
//             pairs (in a fixed order, so every block and every run agrees)
//             and writes its chunk, reading it a second time. Packs and
//             scalar ends as in block.
//   cluster   B == 1, 16-bit and float32 rows longer than 8 packs a
//             thread of 512, more rows than SMs: 2 or 4 blocks a row
//             (3 smaller ones where 2 would leave a ragged last wave)
//             (a thread-block cluster), each share in shared memory, read
//             once; max and sum meet through distributed shared memory
//             (softmax_cluster.cuh; compute capability 9.0).
//   lines     B > 1 (a dim that is not the last), K up to 64: a line in
//             the registers of 1 to 4 lanes of a warp, read once, its max
//             and sum combined by shuffles; neighbouring lines in
//             neighbouring lanes, so a warp's loads are whole sectors
//             (softmax_lines.cuh). Also float64 rows (B == 1) of 17 to
//             27 values (31 for log_softmax), 4 lanes a row.
//   strided   B > 1, longer lines: 32 neighbouring lines (a, b..b+31) a
//             block, so every load of a warp is one coalesced line, with K
//             split over the block's 8 or 32 rows of threads and their
//             online pairs merged in shared memory.
// float16 and bfloat16 accumulate in float, as torch does; float64 in double.
// Rows of -inf give NaN and NaN propagates, as in torch.
#include "softmax_cluster.cuh"
#include "softmax_lines.cuh"
#include "softmax_rows.cuh"
#include "softmax_short.cuh"
#include "pdl.cuh"

using namespace pcs;
using namespace pcs::softmax_rows;
using namespace pcs::softmax_short;

namespace {

// ---------------------------------------------------------------------------
// block: B == 1, long rows

// Rows that fit in shared memory are read from global memory once: the
// first pass keeps them there (CACHE) for the second. Up to 110 KiB two
// blocks share an SM (228 KiB on the H100, with 1 KiB reserved a block);
// a row of up to 200 KiB has an SM to itself, which pays when the rows
// are one wave: [128, 65536] float16 was split over blocks and read twice
// at 0.71x torch.
constexpr size_t SMEM_ROW_BYTES = 110 * 1024, SMEM_ROW_BYTES_ALONE = 200 * 1024;

// The most shared memory a block of the current device may ask for.
size_t smem_optin() { return (size_t)device_attr<cudaDevAttrMaxSharedMemoryPerBlockOptin>(48 * 1024); }

// Whether rows of `bytes` are cached. Rows over 64 KiB leave room for two
// blocks an SM, not three, and rows a little over one wave of those ran
// faster uncached ([300, 50257] float16 1.10x torch uncached, 0.98x
// cached, where [4096, 50257] went 0.92x -> 1.02x cached): they are
// cached when they make one wave, or four and more.
bool caches_row(int64_t rows, size_t bytes)
{
    if (bytes + 1024 > smem_optin()) // the block's own reduction arrays too
        return false;
    const int64_t sms = sm_count(), wave = 2 * sms;
    if (bytes <= 64 * 1024)
        return true;
    if (bytes <= SMEM_ROW_BYTES)
        return rows <= wave || rows >= 4 * wave;
    return bytes <= SMEM_ROW_BYTES_ALONE && rows <= sms;
}

// Packs a thread keeps in flight in the passes that read global memory.
constexpr int UNROLL = 4;

// VEC > 1 reads the row as RowParts: scalar ends around whole packs.
template <class T, int VEC, bool CACHE, bool LOG>
__global__ void __launch_bounds__(BLOCK) softmax_block(T *out, const T *in, int64_t rows, int64_t K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    using P = Pack<T, VEC>;
    // softmax of float32/float64 keeps exp(x - max) in the cached row for
    // the write: exact in T, and one exp an element instead of two
    constexpr bool KEEP = CACHE && !LOG && std::is_same_v<T, A>;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    P *cache = reinterpret_cast<P *>(smem_raw);
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = in + row * K;
        const RowParts<T, VEC> pt(xr, K);
        const P *x = reinterpret_cast<const P *>(xr + pt.h);
        const int64_t nvec = pt.nvec, e = pt.extra(threadIdx.x);
        A ev = e >= 0 ? to_c<A>(xr[e]) : neg_inf<A>(); // this thread's scalar end, if any
        MS<A> r;
        // each thread reads back only the entries it cached: no barrier needed
        if constexpr (CACHE) {
            // the row is in shared memory: the max, then the sum of
            // exp(x - max), then the result, with one exp an element in each
            // pass that needs one and none of the online pair's branches and
            // rescales (which made the wide rows issue-bound)
            A m = ev;
#pragma unroll 4
            for (int64_t i = threadIdx.x; i < nvec; i += BLOCK) {
                P pk = x[i];
                cache[i] = pk;
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    m = nan_max(m, to_c<A>(pk.v[j]));
            }
            r = block_merge(MS<A>{m, A(0)});
            const RowExp<T> ex(r.m);
            A s = A(0);
            if (e >= 0)
                add_exp<LOG>(ev, ex, s); // softmax keeps exp(ev - max) in ev
#pragma unroll 4
            for (int64_t i = threadIdx.x; i < nvec; i += BLOCK) {
                P pk = cache[i];
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    const A ej = ex(to_c<A>(pk.v[j]));
                    s += ej;
                    if constexpr (KEEP)
                        pk.v[j] = ej;
                }
                if constexpr (KEEP)
                    cache[i] = pk;
            }
            r = block_merge(MS<A>{r.m, s}); // one max for all: the sums just add
        } else {
            MS<A> p = {neg_inf<A>(), A(0)};
            if (e >= 0)
                ms_add(p, ev);
            ms_add_packs<UNROLL>(p, x, nvec, threadIdx.x, BLOCK);
            r = block_merge(p);
        }
        const A k_ = row_k(r.s, LOG);
        T *yr = out + row * K;
        P *y = reinterpret_cast<P *>(yr + pt.h);
        if (e >= 0)
            yr[e] = from_c<T>(CACHE ? finish_kept<A, LOG>(ev, r.m, k_) : finish<LOG>(ev, RowExp<T>(r.m), k_));
        if constexpr (CACHE) {
            const RowExp<T> ex(r.m);
#pragma unroll 4
            for (int64_t i = threadIdx.x; i < nvec; i += BLOCK) {
                P pk = cache[i], o;
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    if constexpr (KEEP)
                        o.v[j] = pk.v[j] * k_;
                    else
                        o.v[j] = from_c<T>(finish<LOG>(to_c<A>(pk.v[j]), ex, k_));
                }
                y[i] = o;
            }
        } else {
            finish_packs<UNROLL, LOG>(y, x, nvec, threadIdx.x, BLOCK, r.m, k_);
        }
    }
}

// ---------------------------------------------------------------------------
// split: B == 1, long rows, few of them

// Chunks of at least this many values a block.
constexpr int64_t SPLIT_MIN_CHUNK = 8192;

// Blocks of the split kernels an SM is sized for (their launch bounds).
constexpr int SPLIT_BLOCKS_PER_SM = 2;

// Blocks a row for `rows` rows of K (1: no split). [16, 2^22] float32 ran
// a block a row, 16 blocks on 132 SMs, at 0.66x torch. The blocks make one
// block an SM at most: two an SM, or a second, part-filled wave, ran
// slower ([128, 65536] float32 split in two 0.85x torch, a block a row
// 1.02x; [32, 131072] in 8 blocks a row 22.5 us, in 4 21.0 us).
int64_t split_of(int64_t rows, int64_t K, size_t elem)
{
    const int64_t sms = sm_count();
    if (rows * 2 > sms || K < 4 * SPLIT_MIN_CHUNK || caches_row(rows, (size_t)K * elem))
        return 1;
    const int64_t s = sms / rows, most = K / SPLIT_MIN_CHUNK;
    return s < most ? s : most;
}

// Block b covers chunk b % S of row b / S: packs [lo, hi) of the row's
// whole packs (RowParts); chunk 0 also takes the row's scalar ends.
template <class T, int VEC> struct Chunk {
    int64_t row, c, lo, hi;
    RowParts<T, VEC> pt;
    __device__ __forceinline__ Chunk(const T *in, int64_t K, int64_t S)
        : row(blockIdx.x / S), c(blockIdx.x % S), pt(in + row * K, K)
    {
        const int64_t cp = (pt.nvec + S - 1) / S;
        lo = c * cp;
        hi = lo + cp < pt.nvec ? lo + cp : pt.nvec;
    }
    __device__ __forceinline__ int64_t extra() const { return c == 0 ? pt.extra(threadIdx.x) : -1; }
};

template <class T, int VEC>
__global__ void __launch_bounds__(BLOCK, SPLIT_BLOCKS_PER_SM)
    softmax_split_pairs(MS<compute_t<T>> *ws, const T *in, int64_t K, int64_t S)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    const Chunk<T, VEC> ch(in, K, S);
    const T *xr = in + ch.row * K;
    MS<A> p = {neg_inf<A>(), A(0)};
    const int64_t e = ch.extra();
    if (e >= 0)
        ms_add(p, to_c<A>(xr[e]));
    ms_add_packs<UNROLL>(p, reinterpret_cast<const Pack<T, VEC> *>(xr + ch.pt.h), ch.hi, ch.lo + threadIdx.x,
                         BLOCK);
    const MS<A> r = block_merge(p);
    if (threadIdx.x == 0)
        ws[blockIdx.x] = r;
}

template <class T, int VEC, bool LOG>
__global__ void __launch_bounds__(BLOCK, SPLIT_BLOCKS_PER_SM)
    softmax_split_write(T *out, const T *in, const MS<compute_t<T>> *ws, int64_t K, int64_t S)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    using P = Pack<T, VEC>;
    const Chunk<T, VEC> ch(in, K, S);
    MS<A> p = {neg_inf<A>(), A(0)};
    for (int64_t i = threadIdx.x; i < S; i += BLOCK)
        p = ms_merge(p, ws[ch.row * S + i]);
    const MS<A> r = block_merge(p);
    const A k_ = row_k(r.s, LOG);
    const T *xr = in + ch.row * K;
    T *yr = out + ch.row * K;
    const int64_t e = ch.extra();
    if (e >= 0)
        yr[e] = from_c<T>(finish<LOG>(to_c<A>(xr[e]), RowExp<T>(r.m), k_));
    finish_packs<UNROLL, LOG>(reinterpret_cast<P *>(yr + ch.pt.h), reinterpret_cast<const P *>(xr + ch.pt.h),
                              ch.hi, ch.lo + threadIdx.x, BLOCK, r.m, k_);
}

template <class T, bool LOG>
void launch_split(T *out, const T *in, int64_t rows, int64_t K, int64_t S, void *ws, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    using M = MS<compute_t<T>>;
    const dim3 grid((unsigned)(rows * S));
    auto go = [&](auto vc) {
        constexpr int V = decltype(vc)::value;
        launch_kernel_pdl(softmax_split_pairs<T, V>, grid, BLOCK, st, (M *)ws, in, K, S);
        launch_kernel_pdl(softmax_split_write<T, V, LOG>, grid, BLOCK, st, out, in, (const M *)ws, K, S);
    };
    if (VEC > 1 && same_offset(in, out))
        go(std::integral_constant<int, VEC>{});
    else
        go(std::integral_constant<int, 1>{});
}

// Blocks of softmax_regs an SM holds, for elements of `elem` bytes and PPT
// packs a thread, counted in blocks of BLOCK threads (a kernel of NT threads
// a block asks for BLOCK / NT times as many): two while a thread's values
// fit in 64 registers.
constexpr int regs_per_sm(size_t elem, int ppt) { return ppt <= 4 || (ppt <= 8 && elem <= 4) ? 2 : 1; }

// regs: B == 1, K > 1024, rows of at most PPT packs a thread of NT
// threads, a block a row (its max and sum reduced over NT / 32 warps): the
// row stays in registers, read once with all of a thread's loads in flight
// together, and written from there. The shared-memory kernel below made
// three passes over shared memory and two exps an element for softmax:
// float16 [16384, 16384] ran at 0.81x torch. Rows that are not whole packs
// on 16-byte boundaries are read as RowParts (a thread's scalar end in ev).
// The values are kept in the accumulation type (softmax then takes each
// exp once), except 16-bit rows of more than 4 packs a thread, which keep
// the packs as loaded (half the registers) and convert them in each pass.
// Rows of 8 and 16 packs a thread (up to 65536 16-bit values, 32768
// float32, 16384 float64) came for rows few enough for one wave: a row of
// an SM read at once is one memory round trip, where the shared-memory
// kernel's four loads in flight a thread made it four to eight, one after
// another ([128, 65536] float16 log_softmax 0.76x torch, float32
// [128, 32000] 0.89x); launch_block says which many rows take them too.
template <class T, int PPT, bool LOG, int NT = BLOCK, int MINB = regs_per_sm(sizeof(T), PPT) * BLOCK / NT>
__global__ void __launch_bounds__(NT, MINB)
    softmax_regs(T *out, const T *in, int64_t rows, int K)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    constexpr int VEC = 16 / sizeof(T);
    using P = Pack<T, VEC>;
    constexpr bool KEPT = !(is_lowp<T> && PPT > 4); // values kept as A (exp(x - max) for softmax)
    __shared__ A red[NT / 32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = in + row * K;
        const RowParts<T, VEC> pt(xr, K);
        const P *x = reinterpret_cast<const P *>(xr + pt.h);
        const int nvec = (int)pt.nvec;
        const int64_t e = pt.extra(threadIdx.x);
        A ev = e >= 0 ? to_c<A>(xr[e]) : neg_inf<A>(), m = ev;
        A v[KEPT ? PPT : 1][VEC]; // the values, when kept
        uint4 raw[PPT];           // the packs as loaded (read only where i < nvec)
        // Every load first, into its own registers, then the values: with
        // each pack converted as it was loaded, ptxas gave all the loads of
        // 8 and 16 packs the same registers, so each waited for the one
        // before it (a row read one 16-byte pack a thread at a time).
#pragma unroll
        for (int p = 0; p < PPT; p++) { // past the row's packs: pack 0 again, unused
            const int i = threadIdx.x + NT * p;
            raw[p] = *reinterpret_cast<const uint4 *>(x + (i < nvec ? i : 0));
        }
#pragma unroll
        for (int p = 0; p < PPT; p++) {
            const int i = threadIdx.x + NT * p;
            const P pk = from_words<P>(raw[p]);
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const A a = i < nvec ? to_c<A>(pk.v[j]) : neg_inf<A>();
                if constexpr (KEPT)
                    v[p][j] = a;
                m = nan_max(m, a);
            }
        }
        m = block_reduce<0, NT / 32>(m, red);
        const RowExp<T> ex(m);
        A s = A(0);
        if (e >= 0)
            add_exp<LOG>(ev, ex, s);
#pragma unroll
        for (int p = 0; p < PPT; p++) {
            if (threadIdx.x + NT * p < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    if constexpr (KEPT) {
                        add_exp<LOG>(v[p][j], ex, s);
                    } else {
                        A a = to_c<A>(from_words<P>(raw[p]).v[j]);
                        add_exp<LOG>(a, ex, s);
                    }
                }
            }
        }
        s = block_reduce<1, NT / 32>(s, red);
        const A k_ = row_k(s, LOG);
        T *yr = out + row * K;
        P *y = reinterpret_cast<P *>(yr + pt.h);
        if (e >= 0)
            yr[e] = from_c<T>(finish_kept<A, LOG>(ev, m, k_));
#pragma unroll
        for (int p = 0; p < PPT; p++) {
            const int i = threadIdx.x + NT * p;
            if (i < nvec) {
                P o;
#pragma unroll
                for (int j = 0; j < VEC; j++) {
                    if constexpr (KEPT)
                        o.v[j] = from_c<T>(finish_kept<A, LOG>(v[p][j], m, k_));
                    else
                        o.v[j] = from_c<T>(finish<LOG>(to_c<A>(from_words<P>(raw[p]).v[j]), ex, k_));
                }
                y[i] = o;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// strided: B > 1

// A block is 32 lines (neighbouring b, so a warp reads one coalesced
// 32-element line) by Y threads that split K between them; their online
// pairs merge through shared memory. Y = 32 when there are too few lines
// to fill the GPU otherwise ([8192, 8192] along dim 0: 8192 lines).
template <class T, int Y, bool LOG>
__global__ void __launch_bounds__(32 * Y) softmax_strided(T *out, const T *in, int64_t A_, int64_t K,
                                                          int64_t B)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    __shared__ A sm[Y][33], ss[Y][33];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t chunks = (B + 31) / 32, total = A_ * chunks;
    for (int64_t c = blockIdx.x; c < total; c += gridDim.x) {
        const int64_t a = c / chunks, b = (c - a * chunks) * 32 + tx;
        const bool ok = b < B;
        const T *x = in + a * K * B + b;
        MS<A> p = {neg_inf<A>(), A(0)};
        if (ok) {
            int64_t k = ty;
            for (; k + 3 * Y < K; k += 4 * Y) { // four loads in flight
                A v0 = to_c<A>(x[k * B]), v1 = to_c<A>(x[(k + Y) * B]);
                A v2 = to_c<A>(x[(k + 2 * Y) * B]), v3 = to_c<A>(x[(k + 3 * Y) * B]);
                ms_add(p, v0);
                ms_add(p, v1);
                ms_add(p, v2);
                ms_add(p, v3);
            }
            for (; k < K; k += Y)
                ms_add(p, to_c<A>(x[k * B]));
        }
        sm[ty][tx] = p.m;
        ss[ty][tx] = p.s;
        __syncthreads();
        MS<A> r = {sm[0][tx], ss[0][tx]};
        for (int y = 1; y < Y; y++)
            r = ms_merge(r, MS<A>{sm[y][tx], ss[y][tx]});
        __syncthreads(); // read before the next chunk overwrites
        if (ok) {
            A k_ = row_k(r.s, LOG);
            T *yp = out + a * K * B + b;
            for (int64_t k = ty; k < K; k += Y)
                yp[k * B] = from_c<T>(finish<LOG>(to_c<A>(x[k * B]), RowExp<T>(r.m), k_));
        }
    }
}

// Lines of at most 4 lanes of 16 values (softmax_lines.cuh): the max and
// then the sum of exp taken over the values in registers, each combined
// across the line's lanes by shuffles; softmax keeps each exp for the write
// (one exp a value), log_softmax writes x - m - log(s).
template <class T, int Y, int KPT, int V, bool LOG>
__global__ void __launch_bounds__(softmax_lines::LINES_BLOCK)
    softmax_lines_k(T *__restrict__ out, const T *__restrict__ in, int64_t lines, int64_t K, int64_t B)
{
    pcs::pdl_wait(); // launched early (pdl.cuh): nothing global before this
    using A = compute_t<T>;
    using L = softmax_lines::LaneLines<Y, V>;
    softmax_lines::for_warp_chunks<Y, V>(lines, [&](int64_t c) {
        const L ln(c, lines, K, B);
        Pack<T, V> v[KPT];
        ln.template load<KPT>(v, in, K, B);
        A m[V], k_[V], e[LOG ? 1 : KPT][V];
#pragma unroll
        for (int j = 0; j < V; j++) {
            m[j] = neg_inf<A>();
#pragma unroll
            for (int i = 0; i < KPT; i++)
                if (ln.has(i, K))
                    m[j] = nan_max(m[j], to_c<A>(v[i].v[j]));
            m[j] = L::combine(m[j], [](A a, A b) { return nan_max(a, b); });
            const RowExp<T> ex(m[j]);
            A s = A(0);
#pragma unroll
            for (int i = 0; i < KPT; i++)
                if (ln.has(i, K)) {
                    const A x = ex(to_c<A>(v[i].v[j]));
                    s += x;
                    if constexpr (!LOG)
                        e[i][j] = x;
                }
            k_[j] = row_k(L::combine(s, [](A a, A b) { return a + b; }), LOG);
        }
        ln.template store<KPT>(out, K, B, [&](int i) {
            Pack<T, V> w;
#pragma unroll
            for (int j = 0; j < V; j++) {
                if constexpr (LOG)
                    w.v[j] = from_c<T>(to_c<A>(v[i].v[j]) - m[j] - k_[j]);
                else
                    w.v[j] = from_c<T>(e[i][j] * k_[j]);
            }
            return w;
        });
    });
}

// ---------------------------------------------------------------------------
// Launch

// The caching variant when the row fits and the kernel may have that much
// shared memory (asked for beyond the default 48 KiB; a refusal is cleared
// and the two-read variant runs instead). launch_kernel passes no dynamic
// shared memory, so these launch themselves; the status reaches the
// caller's PCS_CHECK_LAUNCH the same way.
template <class T, int VEC, bool LOG>
void launch_block_vec(T *out, const T *in, int64_t rows, int64_t K, dim3 grid, cudaStream_t st)
{
    const size_t bytes = (size_t)K * sizeof(T);
    void *params[] = {(void *)&out, (void *)&in, (void *)&rows, (void *)&K};
    if (caches_row(rows, bytes)) {
        // (a row with an SM to itself measured slower with 1024 threads:
        // float32 [128, 32000] 0.86x -> 0.64x torch)
        const void *k = (const void *)softmax_block<T, VEC, true, LOG>;
        bool ok = true;
        if (bytes > 48 * 1024) {
            if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess) {
                (void)cudaGetLastError(); // not an error of the op: the fallback runs
                ok = false;
            } else if (cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared) != cudaSuccess) {
                // only a preference (more blocks an SM): go on
                (void)cudaGetLastError();
            }
        }
        if (ok) {
            (void)cudaLaunchKernel(k, grid, BLOCK, params, bytes, st);
            return;
        }
    }
    (void)cudaLaunchKernel((const void *)softmax_block<T, VEC, false, LOG>, grid, BLOCK, params, 0, st);
}

// cluster (softmax_cluster.cuh): rows longer than 8 packs a thread of a
// block, more of them than SMs. A row is split over CS = 2 or 4 blocks
// whose shares of at most 64 KiB sit in shared memory, three blocks of 512
// threads an SM. When those blocks would make a last wave under a quarter
// full (fewer than four waves; float32 [200, 32768], 400 blocks on 396
// places, ran 7 % slower than below), rows of up to 132 KiB go to clusters
// of 3 blocks of 256 threads, five an SM, shares of at most 44 KiB (600
// blocks on 660 places), and otherwise the kernels below run. On the H200
// against the kernels below, in one process: float16 [133, 65536]
// log_softmax 22.4 -> 15.4 us (0.83x -> 1.21x torch), softmax 23.5 ->
// 15.8; [150, 50257] 18.1 -> 13.9; [500, 65536] 55.2 -> 46.7; [2048,
// 40000] 133.7 -> 119.9 (bfloat16 alike); float32 [140, 65536] (4 blocks a
// row) 37.3 -> 31.0, [1000, 50257] 160.0 -> 140.7, [4096, 32000] 328.1 ->
// 297.9; 16-bit softmax [4096, 50257] 2 to 3 % slower. Compute capability
// 9.0 and up (clusters); false when it does not apply or the launch was
// refused, and nothing ran.
template <class T, bool LOG>
bool launch_cluster(T *out, const T *in, int64_t rows, int64_t K, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T);
    constexpr int64_t SHARE = 64 * 1024, SHARE3 = 44 * 1024;
    const int64_t row_bytes = (K / VEC) * 16;
    int cs = row_bytes <= 2 * SHARE ? 2 : row_bytes <= 4 * SHARE ? 4 : 0;
    if (!cs || !pdl_supported() || rows > INT32_MAX / 4)
        return false;
    // a last wave under a quarter full, with fewer than four waves
    auto ragged = [](int64_t blocks, int64_t slots) {
        const int64_t tail = blocks % slots;
        return blocks < 4 * slots && tail != 0 && 4 * tail < slots;
    };
    if (ragged(rows * cs, 3 * (int64_t)sm_count())) {
        if (row_bytes > 3 * SHARE3 || ragged(rows * 3, 5 * (int64_t)sm_count()))
            return false;
        cs = 3;
    }
    const size_t bytes = (size_t)((K / VEC + cs - 1) / cs) * 16;
    using namespace softmax_cluster;
    const void *k = cs == 2   ? (const void *)softmax_cluster_rows<T, VEC, LOG, 2>
                    : cs == 3 ? (const void *)softmax_cluster_rows<T, VEC, LOG, 3, 256, 5>
                              : (const void *)softmax_cluster_rows<T, VEC, LOG, 4>;
    // five blocks of 44 KiB need the largest shared-memory carveout
    if ((bytes > 48 * 1024 &&
         cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess) ||
        (cs == 3 && cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
                                         cudaSharedmemCarveoutMaxShared) != cudaSuccess)) {
        (void)cudaGetLastError(); // not an error of the op: the kernels below run
        return false;
    }
    return launch_cluster_rows(k, out, in, K, dim3((unsigned)(rows * cs)), cs, cs == 3 ? 256 : BLOCK, bytes,
                               st);
}

template <class T, bool LOG>
void launch_block(T *out, const T *in, int64_t rows, int64_t K, cudaStream_t st)
{
    constexpr int VEC = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    int64_t cap = (int64_t)sm_count() * 32;
    dim3 grid((unsigned)(rows < cap ? rows : cap));
    if (VEC > 1 && same_offset(in, out)) { // any K, any view: RowParts
        const int64_t ppt = (K / VEC + BLOCK - 1) / BLOCK; // packs a thread, at most
        // Rows of up to 4 packs a thread of a 512-thread block stay in
        // registers, in the smallest block that holds them in 4 packs a
        // thread (64 to 512 threads). 16-bit rows of up to 16384 values:
        // float16 [16384, 16384] went from 0.81x torch to 1.00x
        // (log_softmax 0.74x to 1.14x) in 512-thread blocks. With 512 threads for every row, a row of 2048
        // float32 values was one pack a thread, two blocks an SM (16 KiB in
        // flight, two block reductions a row): on the H200 against the same
        // kernel in 512-thread blocks, [8192, 2048] float32 softmax 57.6 ->
        // 37.1 us (0.77x -> 1.19x torch), [4096, 1536] 28.8 -> 14.2 us,
        // float16 [8192, 2048] 52.5 -> 19.5 us (0.83x -> 2.23x), float64
        // [8192, 2048] (from the shared-memory kernel) 485.8 -> 71.5 us
        // (0.27x -> 1.84x). 1024 threads for float32 and 16-bit rows measured
        // mixed (float32 [4096, 12000] log_softmax 152 -> 161 us, float16
        // [4096, 32768] 190 -> 198 us), so those keep the kernels below.
        const int64_t packs = (K + VEC - 1) / VEC;
        if constexpr (sizeof(T) <= 4) {
            if (ppt > 8 && rows > sm_count() && launch_cluster<T, LOG>(out, in, rows, K, st))
                return;
        }
        if constexpr (sizeof(T) == 8) {
            // float64 rows of 4097 to 8192 values, more than a wave of them:
            // 8 packs a thread of 512 threads, two blocks an SM, so that one
            // block's exps overlap the other's loads. A block of 1024
            // threads at 4 packs a thread, one an SM, left the SM idle in
            // each phase: on the H200 in one process, log_softmax [8192,
            // 5000] 361.3 -> 231.3 us (0.56x -> 0.88x torch), [1000, 5000]
            // 51.2 -> 31.4 (0.60x -> 0.98x), [300, 5000] 16.3 -> 11.7 (0.75x
            // -> 1.03x); softmax [8192, 5000] 341.7 -> 223.3 (1.02x ->
            // 1.55x). Six packs at three blocks an SM measured between the
            // two. Rows of one wave keep one block an SM below ([100, 5000]
            // 5.0 us against 5.4).
            if (packs > 8 * 352 && packs <= 8 * 384 && rows > sm_count()) {
                launch_kernel_pdl(softmax_regs<T, 8, LOG, 384, 2>, grid, 384, st, out, in, rows, (int)K);
                return;
            }
            if (packs > 4 * BLOCK && packs <= 8 * BLOCK && rows > sm_count()) {
                launch_kernel_pdl(softmax_regs<T, 8, LOG, BLOCK, 2>, grid, BLOCK, st, out, in, rows, (int)K);
                return;
            }
        }
        if (packs <= 4 * BLOCK) {
            // A block a row for float32 and 16-bit rows: the block
            // scheduler then hands rows to SMs as blocks drain, where a
            // grid of 32 blocks an SM walking rows left SMs idle at the
            // end ([65536, 2048] float32 log_softmax 284.2 -> 262.8 us,
            // 0.92x -> 1.00x torch; float16 143.1 -> 130.4 us). float64
            // keeps the grid, as do the rows of 8 and 16 packs below
            // (within 2 % either way).
            const dim3 g1 = sizeof(T) <= 4 ? dim3((unsigned)(rows < INT32_MAX ? rows : INT32_MAX)) : grid;
            pow2_class<regs_threads_lo<T>(), BLOCK>(threads_for_packs<T>(packs, BLOCK), [&](auto n) {
                launch_kernel_pdl(softmax_regs<T, 4, LOG, n.value>, g1, n.value, st, out, in, rows, (int)K);
            });
            return;
        }
        // Rows of up to 8 or 16 packs a thread of 512 threads. A block then
        // reads its row, reduces and writes with nothing of its own to
        // overlap (regs_per_sm blocks an SM, one for 16 packs), so this was
        // kept to rows of one wave; but for many rows of float32 (and 16-bit
        // rows of at most 8 packs) and of float64 it still beats the
        // shared-memory kernel below, which made two passes over shared
        // memory. On the H200 against it, in one process: float32 [4096,
        // 12000] softmax 160.7 -> 113.3 us (0.78x -> 1.11x torch), [16384,
        // 16384] 712.7 -> 529.1 us (0.91x -> 1.22x), [4096, 32000] 372.9 ->
        // 333.2 us (1.15x -> 1.29x); float16 [2048, 20000] log_softmax 82.6 ->
        // 56.1 us (0.81x -> 1.20x); float64 [8192, 9000] 707.1 -> 481.8 us
        // (0.92x -> 1.35x). 16-bit rows of 9 to 16 packs a thread were 1.2x to
        // 1.4x slower (float16 [4096, 50257]) and float32 rows of 9 to 11
        // about even ([1024, 20000]), so those keep the one-wave limit.
        const bool many = ppt <= 8 ? sizeof(T) <= 4 : sizeof(T) == 8 || (sizeof(T) == 4 && ppt >= 12);
        if (ppt <= 16 && (many || rows <= (int64_t)regs_per_sm(sizeof(T), ppt <= 8 ? 8 : 16) * sm_count())) {
            pow2_class<8, 16>(ppt, [&](auto p) {
                launch_kernel_pdl(softmax_regs<T, p.value, LOG>, grid, BLOCK, st, out, in, rows, (int)K);
            });
            return;
        }
        launch_block_vec<T, VEC, LOG>(out, in, rows, K, grid, st);
    } else {
        launch_block_vec<T, 1, LOG>(out, in, rows, K, grid, st);
    }
}

template <class T, bool LOG>
void launch_all(T *out, const T *in, int64_t A_, int64_t K, int64_t B, void *ws, cudaStream_t st)
{
    int64_t S;
    if (B == 1 && ws && (S = split_of(A_, K, sizeof(T))) > 1) {
        launch_split<T, LOG>(out, in, A_, K, S, ws, st);
    } else if (B == 1 && K <= 1024) {
        // float64 rows of 17 to 27 values in 4 lanes each (softmax_lines.cuh
        // with B = 1; H100, [2^20, 21] against the warp kernel: softmax
        // 202.7 -> 144.8 us, log_softmax 258.3 -> 157.1; [2^20, 27] 217.4 ->
        // 187.3 and 265.8 -> 201.4). log_softmax up to 31 values (H200,
        // [2^20, 28] 190.6 -> 170.5 us, [2^20, 31] 257.3 -> 189.6, 0.91x ->
        // 1.24x torch); softmax of 28 and 31 ran 20 % slower this way, and
        // 48 and 64 values (either op), float32 and 16 bits were faster in
        // the warp kernels.
        if (sizeof(T) == 8 && K > 16 && K <= (LOG ? 31 : 27) &&
            softmax_lines::launch_lines<T, 16>(A_, K, 1, (uintptr_t)in | (uintptr_t)out,
                                               [&](auto yc, auto kc, auto vc, dim3 grid) {
                                                   launch_kernel_pdl(softmax_lines_k<T, yc.value, kc.value, vc.value, LOG>,
                                                                 grid, dim3(softmax_lines::LINES_BLOCK), st, out, in,
                                                                 A_, K, (int64_t)1);
                                               }))
            return;
        launch_warp<T, LOG>(out, in, A_, (int)K, st);
    } else if (B == 1) {
        launch_block<T, LOG>(out, in, A_, K, st);
    } else {
        // Lines of up to 64 values sit in a few lanes' registers, read once
        // (H100, [32, 21, 128, 128] over dim 1 against the kernels below:
        // float32 log_softmax 88.2 -> 46.5 us, float16 77.8 -> 30.8,
        // float64 202 -> 72; [65536, 32, 2] float16 613 -> 12.2)
        if (softmax_lines::launch_lines<T, 16>(A_ * B, K, B, (uintptr_t)in | (uintptr_t)out,
                                               [&](auto yc, auto kc, auto vc, dim3 grid) {
                                                   launch_kernel_pdl(softmax_lines_k<T, yc.value, kc.value, vc.value, LOG>,
                                                                 grid, dim3(softmax_lines::LINES_BLOCK), st, out, in,
                                                                 A_ * B, K, B);
                                               }))
            return;
        const int64_t chunks = A_ * ((B + 31) / 32), full = (int64_t)sm_count() * 8;
        if (chunks < full) {
            dim3 grid((unsigned)chunks), block(32, 32);
            launch_kernel_pdl(softmax_strided<T, 32, LOG>, grid, block, st, out, in, A_, K, B);
        } else {
            int64_t cap = full * 4;
            dim3 grid((unsigned)(chunks < cap ? chunks : cap)), block(32, 8);
            launch_kernel_pdl(softmax_strided<T, 8, LOG>, grid, block, st, out, in, A_, K, B);
        }
    }
}

} // namespace

extern "C" size_t pcs_softmax_workspace(int dtype, int64_t A, int64_t K, int64_t B)
{
    if (A <= 0 || K <= 0 || B != 1)
        return 0;
    return dispatch_dtype(dtype, [&](auto tag) -> size_t {
        using T = decltype(tag);
        if constexpr (!is_flt<T>) {
            return 0;
        } else {
            const int64_t S = split_of(A, K, sizeof(T));
            return S > 1 ? (size_t)(A * S) * sizeof(MS<compute_t<T>>) : 0;
        }
    });
}

extern "C" int pcs_launch_softmax(int dtype, int log, void *out, const void *in, int64_t A, int64_t K,
                                  int64_t B, void *workspace, cudaStream_t stream)
{
    if (A <= 0 || K <= 0 || B <= 0)
        return 0; // nothing to compute
    return dispatch_float_log(dtype, log, [&](auto tag, auto lg) {
        using T = decltype(tag);
        launch_all<T, decltype(lg)::value>((T *)out, (const T *)in, A, K, B, workspace, stream);
    });
}
