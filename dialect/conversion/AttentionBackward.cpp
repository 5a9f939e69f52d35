// The lowerings of tile.attention_backward, host and device, and the gradient terms they share.
// Over 600 lines: both targets' lowerings of one op and the gradient terms they must compute
// identically stay together.
// Every output element is summed by one iteration (host: a row of dQ, dK or dV in f32
// accumulators; device: one thread per element) in a fixed order — keys ascending for dQ, then
// for dK/dV the query heads of the KV head and their queries ascending — so the result is
// bit-identical run to run, for any thread count, and batch-invariant. The probabilities are
// recomputed from the saved log-sum-exp (no Sq x Sk buffer).
#include <limits>

#include "dialect/conversion/TileSemantics.h"
#include "dialect/conversion/tile_to_gpu/GpuKernels.h"
#include "dialect/conversion/tile_to_loops/HostLoops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace tessera {
namespace {

using lowering::indexConstant;

/// The sizes and per-element terms of one tile.attention_backward.
class Gradients {
 public:
  Gradients(mlir::OpBuilder& b, tile::AttentionBackwardOp op)
      : op_(op), spec_(lowering::AttentionSpec::of(op)) {
    mlir::Location loc = op.getLoc();
    q_ = lowering::memrefSizes(b, loc, op.getQuery());  // B, H, Sq, D
    k_ = lowering::memrefSizes(b, loc, op.getKey());    // B, Hkv, Sk, D
    valueDepth_ = lowering::memrefSizes(b, loc, op.getValue())[3];
  }

  mlir::Value batches() const { return q_[0]; }
  mlir::Value heads() const { return q_[1]; }
  mlir::Value queries() const { return q_[2]; }
  mlir::Value depth() const { return q_[3]; }
  mlir::Value kvHeads() const { return k_[1]; }
  mlir::Value keys() const { return k_[2]; }
  mlir::Value valueDepth() const { return valueDepth_; }
  const lowering::AttentionSpec& spec() const { return spec_; }
  tile::AttentionBackwardOp op() const { return op_; }

  /// H / Hkv (H > 0 when there is a query row; the contract makes H a multiple of Hkv).
  mlir::Value group(mlir::OpBuilder& b) const {
    mlir::Location loc = op_.getLoc();
    mlir::Value kv = b.create<mlir::arith::MaxUIOp>(loc, kvHeads(), indexConstant(b, loc, 1));
    return b.create<mlir::arith::DivUIOp>(loc, heads(), kv);
  }

  /// Σ_d x[d] · y[d] over `size` in f32, d ascending.
  mlir::Value dot(mlir::OpBuilder& b, mlir::Value size, mlir::Value x,
                  llvm::ArrayRef<mlir::Value> xRow, mlir::Value y,
                  llvm::ArrayRef<mlir::Value> yRow) const {
    mlir::Location loc = op_.getLoc();
    auto loop = b.create<mlir::scf::ForOp>(
        loc, indexConstant(b, loc, 0), size, indexConstant(b, loc, 1),
        mlir::ValueRange{lowering::f32Constant(b, loc, 0.0f)},
        [&](mlir::OpBuilder& in, mlir::Location, mlir::Value d, mlir::ValueRange sum) {
          llvm::SmallVector<mlir::Value> xi(xRow.begin(), xRow.end()), yi(yRow.begin(), yRow.end());
          xi.push_back(d);
          yi.push_back(d);
          mlir::Value product = in.create<mlir::arith::MulFOp>(
              loc, lowering::loadAsF32(in, loc, x, xi), lowering::loadAsF32(in, loc, y, yi));
          in.create<mlir::scf::YieldOp>(
              loc, mlir::ValueRange{in.create<mlir::arith::AddFOp>(loc, sum[0], product)});
        });
    return loop.getResult(0);
  }

  /// D_i = dO_i · O_i, the row's Σ_j P_ij dP_ij.
  mlir::Value delta(mlir::OpBuilder& b, mlir::Value batch, mlir::Value head,
                    mlir::Value query) const {
    return dot(b, valueDepth(), op_.getGradOutput(), {batch, head, query}, op_.getOutput(),
               {batch, head, query});
  }

  /// The keys query `query` of `batch` sees.
  lowering::KeyRange visible(mlir::OpBuilder& b, mlir::Value batch, mlir::Value query) const {
    return lowering::visibleKeys(b, op_.getLoc(), spec_, batch, query, keys(), queries());
  }

  struct Terms {
    mlir::Value kept;   ///< Z · P: the weight dO_i contributes to dV_j
    mlir::Value score;  ///< dS_ij for the score before scaling (the soft cap's derivative applied)
  };

  /// The terms of pairs of query row (batch, head, query) from their raw dot products `raw`
  /// (q·k) and `valueDot` (dO_i·V_j), f32 or f32 lanes of a block of keys: P = exp(s − lse),
  /// dP = Z · valueDot, dS = P (dP − D_i) · (1 − (s/c)²). `bias` and `z` (dropout's Z: 1/(1 − p)
  /// where kept, 0 where dropped) are of raw's type, null when the op has none.
  Terms combine(mlir::OpBuilder& b, mlir::Value batch, mlir::Value head, mlir::Value query,
                mlir::Value raw, mlir::Value bias, mlir::Value z, mlir::Value valueDot,
                mlir::Value rowDelta, mlir::Value scale) const {
    mlir::Location loc = op_.getLoc();
    mlir::Type type = raw.getType();
    auto like = [&](mlir::Value scalar) -> mlir::Value {
      if (scalar.getType() == type) return scalar;
      return b.create<mlir::vector::BroadcastOp>(loc, type, scalar);
    };
    mlir::Value s = lowering::attentionScore(b, loc, spec_, raw, scale, bias);
    mlir::Value lse =
        b.create<mlir::memref::LoadOp>(loc, op_.getLse(), mlir::ValueRange{batch, head, query});
    mlir::Value zero = lowering::f32Like(b, loc, type, 0.0f);
    // A row whose lse is not finite (every visible score -inf: a bias that masks the whole row)
    // contributes nothing, whatever its dO and its NaN output.
    mlir::Value finite = b.create<mlir::arith::CmpFOp>(
        loc, mlir::arith::CmpFPredicate::OLT, b.create<mlir::math::AbsFOp>(loc, lse),
        lowering::f32Constant(b, loc, std::numeric_limits<float>::infinity()));
    mlir::Value p = b.create<mlir::arith::SelectOp>(
        loc, finite,
        b.create<mlir::math::ExpOp>(loc, b.create<mlir::arith::SubFOp>(loc, s, like(lse))), zero);
    mlir::Value kept = z ? b.create<mlir::arith::MulFOp>(loc, z, p).getResult() : p;
    mlir::Value dp = z ? b.create<mlir::arith::MulFOp>(loc, z, valueDot).getResult() : valueDot;
    mlir::Value ds = b.create<mlir::arith::MulFOp>(
        loc, p, b.create<mlir::arith::SubFOp>(loc, dp, like(rowDelta)));
    const double cap = spec_.getSoftcapOrZero();
    if (cap > 0) {
      mlir::Value ratio = b.create<mlir::arith::DivFOp>(
          loc, s, lowering::f32Like(b, loc, type, static_cast<float>(cap)));
      mlir::Value derivative =
          b.create<mlir::arith::SubFOp>(loc, lowering::f32Like(b, loc, type, 1.0f),
                                        b.create<mlir::arith::MulFOp>(loc, ratio, ratio));
      ds = b.create<mlir::arith::MulFOp>(loc, ds, derivative);
    }
    // A pair of weight 0 (a masked key, an underflow, a row that contributes nothing) has
    // dS = 0, also where dP − D or the cap's derivative is not finite.
    mlir::Value none = b.create<mlir::arith::CmpFOp>(loc, mlir::arith::CmpFPredicate::OEQ, p, zero);
    ds = b.create<mlir::arith::SelectOp>(loc, none, zero, ds);
    return {kept, ds};
  }

  /// The position sizes (B, H, Sq, Sk) dropout's counter is built from.
  llvm::SmallVector<mlir::Value, 4> positionSizes() const {
    return {batches(), heads(), queries(), keys()};
  }

  /// A dot product Σ_w x[xRow, w] · y[yRow, w] over w < size, f32.
  using Dot = llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value size, mlir::Value x,
                                             llvm::ArrayRef<mlir::Value> xRow, mlir::Value y,
                                             llvm::ArrayRef<mlir::Value> yRow)>;

  /// combine() of one pair (query `query` of head `head`, key `key` of `kvHead`), scalars, its
  /// dot products by `dot` (null: dot() here, w ascending).
  Terms terms(mlir::OpBuilder& b, mlir::Value batch, mlir::Value head, mlir::Value kvHead,
              mlir::Value query, mlir::Value key, mlir::Value rowDelta, mlir::Value scale,
              Dot dotBy = nullptr) const {
    mlir::Location loc = op_.getLoc();
    auto sequential = [&](mlir::OpBuilder& in, mlir::Value size, mlir::Value x,
                          llvm::ArrayRef<mlir::Value> xRow, mlir::Value y,
                          llvm::ArrayRef<mlir::Value> yRow) {
      return dot(in, size, x, xRow, y, yRow);
    };
    Dot product = dotBy ? dotBy : Dot(sequential);
    mlir::Value raw = product(b, depth(), op_.getQuery(), {batch, head, query}, op_.getKey(),
                              {batch, kvHead, key});
    mlir::Value bias = spec_.getBias()
                           ? lowering::attentionBias(b, loc, spec_, batch, head, query, key)
                           : mlir::Value();
    mlir::Value z =
        spec_.getDropoutOrZero() > 0
            ? lowering::droppedWeight(b, loc, spec_, lowering::f32Constant(b, loc, 1.0f),
                                      {batch, head, query, key}, positionSizes())
            : mlir::Value();
    mlir::Value valueDot = product(b, valueDepth(), op_.getGradOutput(), {batch, head, query},
                                   op_.getValue(), {batch, kvHead, key});
    return combine(b, batch, head, query, raw, bias, z, valueDot, rowDelta, scale);
  }

  /// Whether key `key` is among the keys query `query` of `batch` sees (i1).
  mlir::Value sees(mlir::OpBuilder& b, mlir::Value batch, mlir::Value query,
                   mlir::Value key) const {
    mlir::Location loc = op_.getLoc();
    lowering::KeyRange range = visible(b, batch, query);
    return b.create<mlir::arith::AndIOp>(
        loc, b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::uge, key, range.first),
        b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ult, key, range.end));
  }

 private:
  mutable tile::AttentionBackwardOp op_;  // mutable: MLIR op handles have non-const accessors
  lowering::AttentionSpec spec_;
  llvm::SmallVector<mlir::Value> q_, k_;
  mlir::Value valueDepth_;
};

void store(mlir::OpBuilder& b, mlir::Location loc, mlir::Value value, mlir::Value memref,
           mlir::ValueRange index) {
  auto element = llvm::cast<mlir::MemRefType>(memref.getType()).getElementType();
  b.create<mlir::memref::StoreOp>(loc, lowering::convertFloat(b, loc, value, element), memref,
                                  index);
}

/// `body(builder, accumulators)` over the visible pairs of dK/dV row (batch, kvHead, key): the
/// query heads of the KV head, then their queries, ascending; returns the final values.
template <typename Body>
llvm::SmallVector<mlir::Value> forEachQueryOfKey(mlir::OpBuilder& b, const Gradients& g,
                                                 mlir::Value batch, mlir::Value kvHead,
                                                 mlir::Value key, mlir::ValueRange init,
                                                 Body body) {
  mlir::Location loc = g.op().getLoc();
  mlir::Value group = g.group(b);
  mlir::Value firstHead = b.create<mlir::arith::MulIOp>(loc, kvHead, group);
  auto heads = b.create<mlir::scf::ForOp>(
      loc, indexConstant(b, loc, 0), group, indexConstant(b, loc, 1), init,
      [&](mlir::OpBuilder& hb, mlir::Location, mlir::Value h, mlir::ValueRange acc) {
        mlir::Value head = hb.create<mlir::arith::AddIOp>(loc, firstHead, h);
        auto queries = hb.create<mlir::scf::ForOp>(
            loc, indexConstant(hb, loc, 0), g.queries(), indexConstant(hb, loc, 1), acc,
            [&](mlir::OpBuilder& qb, mlir::Location, mlir::Value query, mlir::ValueRange inner) {
              auto visible = qb.create<mlir::scf::IfOp>(
                  loc, g.sees(qb, batch, query, key),
                  [&](mlir::OpBuilder& t, mlir::Location) {
                    t.create<mlir::scf::YieldOp>(loc, body(t, head, query, inner));
                  },
                  [&](mlir::OpBuilder& e, mlir::Location) {
                    e.create<mlir::scf::YieldOp>(loc, inner);
                  });
              qb.create<mlir::scf::YieldOp>(loc, visible.getResults());
            });
        hb.create<mlir::scf::YieldOp>(loc, queries.getResults());
      });
  return llvm::SmallVector<mlir::Value>(heads.getResults());
}

}  // namespace

namespace host {
namespace {

/// Host work units handle blocks of kLanes keys (dK/dV) or kLanes queries (dQ); a block of keys
/// is packed transposed so that its scores are kLanes vector lanes.
constexpr int64_t kBlock = kLanes;
/// Query rows that share each pass over a block's dK/dV lanes or each row of K for dQ.
constexpr int64_t kRowGroup = 4;

/// Index arithmetic at one location.
struct IndexMath {
  mlir::Location loc;
  mlir::Value add(mlir::OpBuilder& b, mlir::Value x, mlir::Value y) const {
    return b.create<mlir::arith::AddIOp>(loc, x, y);
  }
  mlir::Value mul(mlir::OpBuilder& b, mlir::Value x, mlir::Value y) const {
    return b.create<mlir::arith::MulIOp>(loc, x, y);
  }
  mlir::Value less(mlir::OpBuilder& b, mlir::Value x, mlir::Value y) const {
    return b.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::ult, x, y);
  }
  mlir::Value constant(mlir::OpBuilder& b, int64_t value) const {
    return indexConstant(b, loc, value);
  }
};

/// Packs keys [first, first + count) of (batch, kvHead) of `source` ([B, Hkv, Sk, W]) into
/// `buffer` transposed, in f32: at + w·kBlock + l holds source[batch, kvHead, first + l, w],
/// 0 for l ≥ count.
void packBlock(mlir::OpBuilder& b, const IndexMath& m, mlir::Value source, mlir::Value batch,
               mlir::Value kvHead, mlir::Value first, mlir::Value count, mlir::Value width,
               mlir::Value buffer, mlir::Value at) {
  mlir::Location loc = m.loc;
  forEachIndex(b, loc, mlir::ValueRange{width, m.constant(b, kBlock)},
               [&](mlir::OpBuilder& e, mlir::ValueRange wl) {
                 auto value = e.create<mlir::scf::IfOp>(
                     loc, m.less(e, wl[1], count),
                     [&](mlir::OpBuilder& t, mlir::Location) {
                       t.create<mlir::scf::YieldOp>(
                           loc,
                           lowering::loadAsF32(t, loc, source,
                                               {batch, kvHead, m.add(t, first, wl[1]), wl[0]}));
                     },
                     [&](mlir::OpBuilder& t, mlir::Location) {
                       t.create<mlir::scf::YieldOp>(loc, lowering::f32Constant(t, loc, 0.0f));
                     });
                 e.create<mlir::memref::StoreOp>(
                     loc, value.getResult(0), buffer,
                     m.add(e, at, m.add(e, m.mul(e, wl[0], m.constant(e, kBlock)), wl[1])));
               });
}

/// For each of kRowGroup rows `rows[k]` of `source` (indices but the last): lane l of its
/// result = Σ_w source[rows[k], w] · block[w][l] over w < width, ascending — bit for bit the
/// scalar dot product with key l of the packed block at `at`. The rows' sums run interleaved,
/// half a block at a time (independent chains that overlap), through `scratch` (kRowGroup ·
/// kBlock f32 at `scratchAt`).
llvm::SmallVector<mlir::Value> groupLaneDots(mlir::OpBuilder& b, const IndexMath& m,
                                             mlir::Value source,
                                             llvm::ArrayRef<llvm::SmallVector<mlir::Value, 3>> rows,
                                             mlir::Value width, mlir::Value buffer, mlir::Value at,
                                             mlir::Value scratchAt) {
  mlir::Location loc = m.loc;
  constexpr int64_t kHalf = kBlock / 2;
  mlir::VectorType half = laneType(b.getF32Type(), kHalf);
  auto rowAt = [&](mlir::OpBuilder& in, size_t k, int64_t offset) {
    return m.add(in, scratchAt, m.constant(in, static_cast<int64_t>(k) * kBlock + offset));
  };
  for (int64_t h = 0; h < 2; ++h) {
    llvm::SmallVector<mlir::Value> zeros(rows.size(),
                                         splat(b, loc, lowering::f32Constant(b, loc, 0.0f), kHalf));
    auto loop = b.create<mlir::scf::ForOp>(
        loc, m.constant(b, 0), width, m.constant(b, 1), zeros,
        [&](mlir::OpBuilder& in, mlir::Location, mlir::Value w, mlir::ValueRange sums) {
          mlir::Value y = in.create<mlir::vector::LoadOp>(
              loc, half, buffer,
              mlir::ValueRange{m.add(
                  in, at,
                  m.add(in, m.mul(in, w, m.constant(in, kBlock)), m.constant(in, h * kHalf)))});
          llvm::SmallVector<mlir::Value> next;
          for (size_t k = 0; k < rows.size(); ++k) {
            mlir::Value x = splat(
                in, loc, lowering::loadAsF32(in, loc, source, lowering::append(rows[k], w)), kHalf);
            next.push_back(in.create<mlir::arith::AddFOp>(
                loc, sums[k], in.create<mlir::arith::MulFOp>(loc, x, y)));
          }
          in.create<mlir::scf::YieldOp>(loc, next);
        });
    for (size_t k = 0; k < rows.size(); ++k) {
      b.create<mlir::vector::StoreOp>(loc, loop.getResult(k), buffer,
                                      mlir::ValueRange{rowAt(b, k, h * kHalf)});
    }
  }
  llvm::SmallVector<mlir::Value> dots;
  for (size_t k = 0; k < rows.size(); ++k) {
    dots.push_back(b.create<mlir::vector::LoadOp>(loc, laneType(b.getF32Type()), buffer,
                                                  mlir::ValueRange{rowAt(b, k, 0)}));
  }
  return dots;
}

/// The lanes [begin, end) of the block of keys [first, first + count) that a query seeing
/// `range` sees, as a lane mask, and whether there is any.
struct VisibleLanes {
  mlir::Value begin, end, mask, any;
};
VisibleLanes visibleLanes(mlir::OpBuilder& b, const IndexMath& m, lowering::KeyRange range,
                          mlir::Value first, mlir::Value count) {
  mlir::Location loc = m.loc;
  auto maxU = [&](mlir::Value x, mlir::Value y) -> mlir::Value {
    return b.create<mlir::arith::MaxUIOp>(loc, x, y);
  };
  VisibleLanes lanes;
  lanes.begin = b.create<mlir::arith::SubIOp>(loc, maxU(range.first, first), first);
  lanes.end = b.create<mlir::arith::MinUIOp>(
      loc, count, b.create<mlir::arith::SubIOp>(loc, maxU(range.end, first), first));
  auto maskType = mlir::VectorType::get({kBlock}, b.getI1Type());
  mlir::Value below =
      b.create<mlir::vector::CreateMaskOp>(loc, maskType, mlir::ValueRange{lanes.end});
  mlir::Value before = b.create<mlir::vector::CreateMaskOp>(
      loc, maskType, mlir::ValueRange{b.create<mlir::arith::MinUIOp>(loc, lanes.begin, lanes.end)});
  mlir::Value all =
      b.create<mlir::arith::ConstantOp>(loc, mlir::DenseElementsAttr::get(maskType, true));
  lanes.mask =
      b.create<mlir::arith::AndIOp>(loc, below, b.create<mlir::arith::XOrIOp>(loc, before, all));
  lanes.any = m.less(b, lanes.begin, lanes.end);
  return lanes;
}

/// Where a unit's packed K and V blocks and its scratch lanes live in its heap buffer.
struct BlockLayout {
  mlir::Value key, value;  ///< packed K (D · kBlock), packed V (Dv · kBlock)
  mlir::Value bias, keep;  ///< kBlock lanes each: the block's biases, dropout's Z
  mlir::Value dots;        ///< kRowGroup · kBlock: a group's dot products on their way
};

/// The scratch a unit's BlockLayout::bias, keep and dots take.
constexpr int64_t kBlockScratch = (2 + kRowGroup) * kBlock;

/// Places bias, keep and dots at `at` (kBlockScratch f32).
void placeScratch(mlir::OpBuilder& b, const IndexMath& m, BlockLayout& layout, mlir::Value at) {
  layout.bias = at;
  layout.keep = m.add(b, at, m.constant(b, kBlock));
  layout.dots = m.add(b, at, m.constant(b, 2 * kBlock));
}

/// D_i = dO_i · O_i of kRowGroup query rows (batch, heads[k], queries[k]), their sums
/// interleaved (i ascending within each, as Gradients::delta).
llvm::SmallVector<mlir::Value> groupDeltas(mlir::OpBuilder& b, const Gradients& g,
                                           const IndexMath& m, mlir::Value batch,
                                           llvm::ArrayRef<mlir::Value> heads,
                                           llvm::ArrayRef<mlir::Value> queries) {
  mlir::Location loc = m.loc;
  tile::AttentionBackwardOp op = g.op();
  llvm::SmallVector<mlir::Value> zeros(queries.size(), lowering::f32Constant(b, loc, 0.0f));
  auto loop = b.create<mlir::scf::ForOp>(
      loc, m.constant(b, 0), g.valueDepth(), m.constant(b, 1), zeros,
      [&](mlir::OpBuilder& in, mlir::Location, mlir::Value e, mlir::ValueRange sums) {
        llvm::SmallVector<mlir::Value> next;
        for (size_t k = 0; k < queries.size(); ++k) {
          const mlir::Value index[] = {batch, heads[k], queries[k], e};
          mlir::Value product = in.create<mlir::arith::MulFOp>(
              loc, lowering::loadAsF32(in, loc, op.getGradOutput(), index),
              lowering::loadAsF32(in, loc, op.getOutput(), index));
          next.push_back(in.create<mlir::arith::AddFOp>(loc, sums[k], product));
        }
        in.create<mlir::scf::YieldOp>(loc, next);
      });
  return llvm::SmallVector<mlir::Value>(loop.getResults());
}

/// Gradients::combine for kRowGroup query rows (batch, heads[k], queries[k]) against the
/// packed block of keys [first, first + count) of their KV head, one key per lane.
llvm::SmallVector<Gradients::Terms> groupTerms(
    mlir::OpBuilder& b, const Gradients& g, const IndexMath& m, mlir::Value buffer,
    const BlockLayout& layout, mlir::Value batch, llvm::ArrayRef<mlir::Value> heads,
    llvm::ArrayRef<mlir::Value> queries, mlir::Value first, mlir::Value count,
    llvm::ArrayRef<mlir::Value> deltas, mlir::Value scale) {
  mlir::Location loc = m.loc;
  tile::AttentionBackwardOp op = g.op();
  mlir::VectorType lanes = laneType(b.getF32Type());
  // Per-lane values go through the scratch lanes (lanes ≥ count keep what they held: they
  // are masked or never read).
  auto perLane = [&](mlir::Value at,
                     llvm::function_ref<mlir::Value(mlir::OpBuilder&, mlir::Value)> value) {
    forEachIndex(b, loc, mlir::ValueRange{count}, [&](mlir::OpBuilder& e, mlir::ValueRange l) {
      e.create<mlir::memref::StoreOp>(loc, value(e, m.add(e, first, l[0])), buffer,
                                      m.add(e, at, l[0]));
    });
    return b.create<mlir::vector::LoadOp>(loc, lanes, buffer, mlir::ValueRange{at}).getResult();
  };
  llvm::SmallVector<llvm::SmallVector<mlir::Value, 3>> rows;
  for (size_t k = 0; k < queries.size(); ++k) rows.push_back({batch, heads[k], queries[k]});
  auto raws = groupLaneDots(b, m, op.getQuery(), rows, g.depth(), buffer, layout.key, layout.dots);
  auto valueDots = groupLaneDots(b, m, op.getGradOutput(), rows, g.valueDepth(), buffer,
                                 layout.value, layout.dots);
  llvm::SmallVector<Gradients::Terms> terms;
  for (size_t k = 0; k < queries.size(); ++k) {
    mlir::Value bias;
    if (g.spec().getBias()) {
      bias = perLane(layout.bias, [&](mlir::OpBuilder& e, mlir::Value key) {
        return lowering::attentionBias(e, loc, g.spec(), batch, heads[k], queries[k], key);
      });
    }
    mlir::Value z;
    if (g.spec().getDropoutOrZero() > 0) {
      z = perLane(layout.keep, [&](mlir::OpBuilder& e, mlir::Value key) {
        return lowering::droppedWeight(e, loc, g.spec(), lowering::f32Constant(e, loc, 1.0f),
                                       {batch, heads[k], queries[k], key}, g.positionSizes());
      });
    }
    terms.push_back(g.combine(b, batch, heads[k], queries[k], raws[k], bias, z, valueDots[k],
                              deltas[k], scale));
  }
  return terms;
}

/// `buffer[at, at + size)` = 0.
void zeroFill(mlir::OpBuilder& b, const IndexMath& m, mlir::Value buffer, mlir::Value at,
              mlir::Value size) {
  mlir::Value zero = lowering::f32Constant(b, m.loc, 0.0f);
  forEachIndex(b, m.loc, mlir::ValueRange{size}, [&](mlir::OpBuilder& e, mlir::ValueRange i) {
    e.create<mlir::memref::StoreOp>(m.loc, zero, buffer, m.add(e, at, i[0]));
  });
}

/// dK and dV: one unit per block of kBlock keys of (batch, kvHead). Its K and V rows are packed
/// transposed, its dK and dV rows accumulate transposed in f32 lanes (one key per lane), and
/// every query row of the KV head's query heads — heads, then queries, ascending — that sees a
/// key of the block adds its terms to the lanes of the keys it sees.
void lowerKeyGradients(mlir::OpBuilder& b, const Gradients& g, mlir::Value scale,
                       ParallelLoops& parallel) {
  const IndexMath m{g.op().getLoc()};
  mlir::Location loc = m.loc;
  tile::AttentionBackwardOp op = g.op();
  mlir::Value block = m.constant(b, kBlock);
  mlir::Value keyBlocks = lowering::ceilDiv(b, loc, g.keys(), kBlock);
  mlir::Value width = m.add(b, g.depth(), g.valueDepth());
  mlir::Value units = lowering::product(b, loc, {g.batches(), g.kvHeads(), keyBlocks});
  mlir::Value cost = lowering::product(b, loc, {g.group(b), g.queries(), width, block});
  parallelForEachIndex(
      b, loc, mlir::ValueRange{units}, cost, parallel,
      [&](mlir::OpBuilder& at, mlir::ValueRange unit) {
        auto position =
            lowering::delinearize(at, loc, unit[0], {g.batches(), g.kvHeads(), keyBlocks});
        mlir::Value batch = position[0], kvHead = position[1];
        mlir::Value first = m.mul(at, position[2], block);
        mlir::Value count = at.create<mlir::arith::MinUIOp>(
            loc, block, at.create<mlir::arith::SubIOp>(loc, g.keys(), first));
        // [packed K | packed V | dKᵀ | dVᵀ | scratch]
        BlockLayout layout;
        layout.key = m.constant(at, 0);
        layout.value = m.mul(at, g.depth(), block);
        mlir::Value keyGradient = m.mul(at, width, block);
        mlir::Value valueGradient = m.add(at, keyGradient, layout.value);
        mlir::Value scratchAt = m.mul(at, m.mul(at, width, block), m.constant(at, 2));
        placeScratch(at, m, layout, scratchAt);
        mlir::Value size = m.add(at, scratchAt, m.constant(at, kBlockScratch));
        mlir::Value memory = allocateF32(at, loc, size);
        packBlock(at, m, op.getKey(), batch, kvHead, first, count, g.depth(), memory, layout.key);
        packBlock(at, m, op.getValue(), batch, kvHead, first, count, g.valueDepth(), memory,
                  layout.value);
        zeroFill(at, m, memory, keyGradient,
                 at.create<mlir::arith::SubIOp>(loc, size, keyGradient));
        // The query rows of the KV head in groups of kRowGroup queries of one head: each row's
        // terms for the block, then one pass over the dK/dV lanes adds the group's rows in order.
        mlir::Value firstHead = m.mul(at, kvHead, g.group(at));
        mlir::Value queryGroups = lowering::ceilDiv(at, loc, g.queries(), kRowGroup);
        forEachIndex(
            at, loc, mlir::ValueRange{g.group(at), queryGroups},
            [&](mlir::OpBuilder& in, mlir::ValueRange hq) {
              mlir::Value head = m.add(in, firstHead, hq[0]);
              mlir::Value firstQuery = m.mul(in, hq[1], m.constant(in, kRowGroup));
              auto maskType = mlir::VectorType::get({kBlock}, in.getI1Type());
              mlir::Value none = in.create<mlir::arith::ConstantOp>(
                  loc, mlir::DenseElementsAttr::get(maskType, false));
              struct GroupRow {
                mlir::Value query, mask, weight, kept;
              };
              llvm::SmallVector<GroupRow> rows;
              mlir::Value anySeen = in.create<mlir::arith::ConstantOp>(loc, in.getBoolAttr(false));
              mlir::Value allWhole = in.create<mlir::arith::ConstantOp>(loc, in.getBoolAttr(true));
              for (int64_t k = 0; k < kRowGroup; ++k) {
                // A row past Sq (the last group's) is a copy of the last row that sees nothing.
                mlir::Value query = m.add(in, firstQuery, m.constant(in, k));
                mlir::Value real = m.less(in, query, g.queries());
                query = in.create<mlir::arith::MinUIOp>(
                    loc, query,
                    in.create<mlir::arith::SubIOp>(loc, g.queries(), m.constant(in, 1)));
                VisibleLanes seen = visibleLanes(in, m, g.visible(in, batch, query), first, count);
                mlir::Value any = in.create<mlir::arith::AndIOp>(loc, real, seen.any);
                mlir::Value whole = in.create<mlir::arith::AndIOp>(
                    loc, any,
                    in.create<mlir::arith::AndIOp>(
                        loc,
                        in.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq,
                                                       seen.begin, m.constant(in, 0)),
                        in.create<mlir::arith::CmpIOp>(loc, mlir::arith::CmpIPredicate::eq,
                                                       seen.end, block)));
                anySeen = in.create<mlir::arith::OrIOp>(loc, anySeen, any);
                allWhole = in.create<mlir::arith::AndIOp>(loc, allWhole, whole);
                GroupRow row;
                row.query = query;
                row.mask = in.create<mlir::arith::SelectOp>(loc, any, seen.mask, none);
                rows.push_back(row);
              }
              auto ifSeen = in.create<mlir::scf::IfOp>(loc, anySeen, /*withElseRegion=*/false);
              mlir::OpBuilder e = ifSeen.getThenBodyBuilder();
              // Every row's scale · dS and Z·P lanes (a row that sees no key of the block is
              // masked).
              {
                llvm::SmallVector<mlir::Value> heads(kRowGroup, head), queries;
                for (const GroupRow& row : rows) queries.push_back(row.query);
                auto deltas = groupDeltas(e, g, m, batch, heads, queries);
                auto terms = groupTerms(e, g, m, memory, layout, batch, heads, queries, first,
                                        count, deltas, scale);
                for (int64_t k = 0; k < kRowGroup; ++k) {
                  rows[k].weight =
                      e.create<mlir::arith::MulFOp>(loc, terms[k].score, splat(e, loc, scale));
                  rows[k].kept = terms[k].kept;
                }
              }
              // lanes[w] += factor_k · source[query_k, w] for the group's rows in order, on the
              // lanes of the keys each sees (`masked`), or on every lane when every row sees the
              // whole block.
              auto accumulate = [&](mlir::OpBuilder& at, bool masked, mlir::Value lanesAt,
                                    mlir::Value size, bool value, mlir::Value source) {
                forEachIndex(
                    at, loc, mlir::ValueRange{size}, [&](mlir::OpBuilder& f, mlir::ValueRange w) {
                      mlir::Value slot = m.add(f, lanesAt, m.mul(f, w[0], block));
                      mlir::Value sum = f.create<mlir::vector::LoadOp>(
                          loc, laneType(f.getF32Type()), memory, mlir::ValueRange{slot});
                      for (const GroupRow& row : rows) {
                        mlir::Value term = f.create<mlir::arith::MulFOp>(
                            loc, value ? row.kept : row.weight,
                            splat(f, loc,
                                  lowering::loadAsF32(f, loc, source,
                                                      {batch, head, row.query, w[0]})));
                        mlir::Value next = f.create<mlir::arith::AddFOp>(loc, sum, term);
                        sum = masked ? f.create<mlir::arith::SelectOp>(loc, row.mask, next, sum)
                                           .getResult()
                                     : next;
                      }
                      f.create<mlir::vector::StoreOp>(loc, sum, memory, mlir::ValueRange{slot});
                    });
              };
              auto paths = e.create<mlir::scf::IfOp>(loc, allWhole, /*withElseRegion=*/true);
              for (const bool masked : {false, true}) {
                mlir::OpBuilder at =
                    masked ? paths.getElseBodyBuilder() : paths.getThenBodyBuilder();
                accumulate(at, masked, keyGradient, g.depth(), false, op.getQuery());
                accumulate(at, masked, valueGradient, g.valueDepth(), true, op.getGradOutput());
              }
            });
        // Out, untransposed.
        for (const bool value : {false, true}) {
          mlir::Value lanesAt = value ? valueGradient : keyGradient;
          forEachIndex(at, loc, mlir::ValueRange{count, value ? g.valueDepth() : g.depth()},
                       [&](mlir::OpBuilder& e, mlir::ValueRange lw) {
                         mlir::Value sum = e.create<mlir::memref::LoadOp>(
                             loc, memory,
                             m.add(e, lanesAt, m.add(e, m.mul(e, lw[1], block), lw[0])));
                         store(e, loc, sum, value ? op.getGradValue() : op.getGradKey(),
                               {batch, kvHead, m.add(e, first, lw[0]), lw[1]});
                       });
        }
        at.create<mlir::memref::DeallocOp>(loc, memory);
      });
}

/// dQ: one unit per block of kBlock query rows of (batch, head). It visits the blocks of keys
/// its rows see, ascending, packing each: every row's dS lanes for the block go to scratch,
/// then groups of kRowGroup rows accumulate dS_ij · scale · K_j over the keys each sees,
/// ascending, a chunk of kChunk columns at a time in registers, each row of K (copied into the
/// unit's aligned scratch) loaded once for the group.
void lowerQueryGradients(mlir::OpBuilder& b, const Gradients& g, mlir::Value scale,
                         ParallelLoops& parallel) {
  constexpr int64_t kChunk = kBlock / 2;  // the group's accumulators fit 16 AVX2 registers
  const IndexMath m{g.op().getLoc()};
  mlir::Location loc = m.loc;
  tile::AttentionBackwardOp op = g.op();
  mlir::Value block = m.constant(b, kBlock);
  mlir::Value queryBlocks = lowering::ceilDiv(b, loc, g.queries(), kBlock);
  mlir::Value width = m.add(b, g.depth(), g.valueDepth());
  mlir::Value units = lowering::product(b, loc, {g.batches(), g.heads(), queryBlocks});
  mlir::Value cost = lowering::product(b, loc, {g.keys(), width, block});
  auto buffer = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, b.getF32Type());
  parallelForEachIndex(
      b, loc, mlir::ValueRange{units}, cost, parallel,
      [&](mlir::OpBuilder& at, mlir::ValueRange unit) {
        auto position =
            lowering::delinearize(at, loc, unit[0], {g.batches(), g.heads(), queryBlocks});
        mlir::Value batch = position[0], head = position[1];
        mlir::Value kvHead = at.create<mlir::arith::DivUIOp>(loc, head, g.group(at));
        mlir::Value firstQuery = m.mul(at, position[2], block);
        mlir::Value rows = at.create<mlir::arith::MinUIOp>(
            loc, block, at.create<mlir::arith::SubIOp>(loc, g.queries(), firstQuery));
        // [packed K | packed V | dQ rows (D rounded up to whole chunks) | D_i | scratch |
        //  dS lanes (rows of kBlock) | the block's K rows (rows of D rounded up, zero-padded)],
        //  kBlock + kRowGroup rows of dQ and of dS (a group may reach past the last row)
        mlir::Value rowWidth =
            m.mul(at, lowering::ceilDiv(at, loc, g.depth(), kChunk), m.constant(at, kChunk));
        BlockLayout layout;
        layout.key = m.constant(at, 0);
        layout.value = m.mul(at, g.depth(), block);
        mlir::Value queryGradient = m.mul(at, width, block);
        mlir::Value slots = m.constant(at, kBlock + kRowGroup);
        mlir::Value deltas = m.add(at, queryGradient, m.mul(at, rowWidth, slots));
        placeScratch(at, m, layout, m.add(at, deltas, block));
        mlir::Value weights = m.add(at, m.add(at, deltas, block), m.constant(at, kBlockScratch));
        mlir::Value keyRows = m.add(at, weights, m.mul(at, slots, block));
        mlir::Value size = m.add(at, keyRows, m.mul(at, block, rowWidth));
        mlir::Value memory = allocateF32(at, loc, size);
        zeroFill(at, m, memory, queryGradient, m.mul(at, rowWidth, slots));
        // Each row's D_i, and the keys [lowest, highest) some row sees.
        mlir::Value none = m.constant(at, 0);
        auto span = at.create<mlir::scf::ForOp>(
            loc, m.constant(at, 0), rows, m.constant(at, 1), mlir::ValueRange{g.keys(), none},
            [&](mlir::OpBuilder& in, mlir::Location, mlir::Value r, mlir::ValueRange bounds) {
              mlir::Value query = m.add(in, firstQuery, r);
              in.create<mlir::memref::StoreOp>(loc, g.delta(in, batch, head, query), memory,
                                               m.add(in, deltas, r));
              lowering::KeyRange range = g.visible(in, batch, query);
              mlir::Value empty = in.create<mlir::arith::CmpIOp>(
                  loc, mlir::arith::CmpIPredicate::eq, range.first, range.end);
              mlir::Value lowest = in.create<mlir::arith::SelectOp>(
                  loc, empty, bounds[0],
                  in.create<mlir::arith::MinUIOp>(loc, bounds[0], range.first));
              mlir::Value highest = in.create<mlir::arith::MaxUIOp>(loc, bounds[1], range.end);
              in.create<mlir::scf::YieldOp>(loc, mlir::ValueRange{lowest, highest});
            });
        mlir::Value lowestKey =
            at.create<mlir::arith::MinUIOp>(loc, span.getResult(0), span.getResult(1));
        at.create<mlir::scf::ForOp>(
            loc, at.create<mlir::arith::DivUIOp>(loc, lowestKey, block),
            lowering::ceilDiv(at, loc, span.getResult(1), kBlock), m.constant(at, 1),
            mlir::ValueRange{},
            [&](mlir::OpBuilder& in, mlir::Location, mlir::Value t, mlir::ValueRange) {
              mlir::Value first = m.mul(in, t, block);
              mlir::Value count = in.create<mlir::arith::MinUIOp>(
                  loc, block, in.create<mlir::arith::SubIOp>(loc, g.keys(), first));
              packBlock(in, m, op.getKey(), batch, kvHead, first, count, g.depth(), memory,
                        layout.key);
              packBlock(in, m, op.getValue(), batch, kvHead, first, count, g.valueDepth(), memory,
                        layout.value);
              // The block's K rows as they are, in aligned rows of whole chunks.
              forEachIndex(
                  in, loc, mlir::ValueRange{block, rowWidth},
                  [&](mlir::OpBuilder& e, mlir::ValueRange lc) {
                    auto value = e.create<mlir::scf::IfOp>(
                        loc,
                        e.create<mlir::arith::AndIOp>(loc, m.less(e, lc[0], count),
                                                      m.less(e, lc[1], g.depth())),
                        [&](mlir::OpBuilder& t, mlir::Location) {
                          t.create<mlir::scf::YieldOp>(
                              loc,
                              lowering::loadAsF32(t, loc, op.getKey(),
                                                  {batch, kvHead, m.add(t, first, lc[0]), lc[1]}));
                        },
                        [&](mlir::OpBuilder& t, mlir::Location) {
                          t.create<mlir::scf::YieldOp>(loc, lowering::f32Constant(t, loc, 0.0f));
                        });
                    e.create<mlir::memref::StoreOp>(
                        loc, value.getResult(0), memory,
                        m.add(e, keyRows, m.add(e, m.mul(e, lc[0], rowWidth), lc[1])));
                  });
              // Each row's dS · scale lanes, kRowGroup rows at a time (a group reaching past `rows`
              // computes copies of the last row into slots of their own; rows that see no key of
              // the block add nothing below).
              in.create<mlir::scf::ForOp>(
                  loc, m.constant(in, 0), rows, m.constant(in, kRowGroup), mlir::ValueRange{},
                  [&](mlir::OpBuilder& rb, mlir::Location, mlir::Value firstRow, mlir::ValueRange) {
                    llvm::SmallVector<mlir::Value> heads(kRowGroup, head), queries, rowDeltas;
                    mlir::Value lastRow =
                        rb.create<mlir::arith::SubIOp>(loc, rows, m.constant(rb, 1));
                    for (int64_t k = 0; k < kRowGroup; ++k) {
                      mlir::Value r = rb.create<mlir::arith::MinUIOp>(
                          loc, m.add(rb, firstRow, m.constant(rb, k)), lastRow);
                      queries.push_back(m.add(rb, firstQuery, r));
                      rowDeltas.push_back(
                          rb.create<mlir::memref::LoadOp>(loc, memory, m.add(rb, deltas, r)));
                    }
                    auto terms = groupTerms(rb, g, m, memory, layout, batch, heads, queries, first,
                                            count, rowDeltas, scale);
                    for (int64_t k = 0; k < kRowGroup; ++k) {
                      mlir::Value slot = m.add(rb, firstRow, m.constant(rb, k));
                      rb.create<mlir::vector::StoreOp>(
                          loc,
                          rb.create<mlir::arith::MulFOp>(loc, terms[k].score,
                                                         splat(rb, loc, scale)),
                          memory, mlir::ValueRange{m.add(rb, weights, m.mul(rb, slot, block))});
                    }
                    rb.create<mlir::scf::YieldOp>(loc);
                  });
              // Groups of kRowGroup rows (past `rows`: rows that see nothing).
              in.create<mlir::scf::ForOp>(
                  loc, m.constant(in, 0), rows, m.constant(in, kRowGroup), mlir::ValueRange{},
                  [&](mlir::OpBuilder& gb, mlir::Location, mlir::Value firstRow, mlir::ValueRange) {
                    llvm::SmallVector<lowering::KeyRange> ranges;
                    llvm::SmallVector<mlir::Value> rowIndex;
                    mlir::Value keyBegin = m.add(gb, first, count), keyEnd = first;
                    for (int64_t k = 0; k < kRowGroup; ++k) {
                      // Rows past `rows` have slots of their own (their sums are never read).
                      mlir::Value r = m.add(gb, firstRow, m.constant(gb, k));
                      mlir::Value real = m.less(gb, r, rows);
                      mlir::Value query = m.add(gb, firstQuery,
                                                gb.create<mlir::arith::MinUIOp>(
                                                    loc, r, m.add(gb, rows, m.constant(gb, -1))));
                      lowering::KeyRange range = g.visible(gb, batch, query);
                      // Clipped to the block; empty for a row past `rows`.
                      mlir::Value from = gb.create<mlir::arith::MaxUIOp>(loc, range.first, first);
                      mlir::Value to =
                          gb.create<mlir::arith::MinUIOp>(loc, range.end, m.add(gb, first, count));
                      to = gb.create<mlir::arith::SelectOp>(loc, real, to, from);
                      to = gb.create<mlir::arith::MaxUIOp>(loc, to, from);
                      mlir::Value empty = gb.create<mlir::arith::CmpIOp>(
                          loc, mlir::arith::CmpIPredicate::eq, from, to);
                      keyBegin = gb.create<mlir::arith::SelectOp>(
                          loc, empty, keyBegin,
                          gb.create<mlir::arith::MinUIOp>(loc, keyBegin, from));
                      keyEnd = gb.create<mlir::arith::SelectOp>(
                          loc, empty, keyEnd, gb.create<mlir::arith::MaxUIOp>(loc, keyEnd, to));
                      ranges.push_back({from, to});
                      rowIndex.push_back(r);
                    }
                    mlir::VectorType chunkType = laneType(gb.getF32Type(), kChunk);
                    gb.create<mlir::scf::ForOp>(
                        loc, m.constant(gb, 0), g.depth(), m.constant(gb, kChunk),
                        mlir::ValueRange{},
                        [&](mlir::OpBuilder& cb, mlir::Location, mlir::Value c, mlir::ValueRange) {
                          llvm::SmallVector<mlir::Value> slots, accumulators;
                          for (int64_t k = 0; k < kRowGroup; ++k) {
                            slots.push_back(m.add(cb, queryGradient,
                                                  m.add(cb, m.mul(cb, rowIndex[k], rowWidth), c)));
                            accumulators.push_back(cb.create<mlir::vector::LoadOp>(
                                loc, chunkType, memory, mlir::ValueRange{slots.back()}));
                          }
                          auto sums = accumulateRows(
                              cb, loc, keyBegin, keyEnd, accumulators, ranges,
                              [&](mlir::OpBuilder& e, mlir::Value j) -> mlir::Value {
                                mlir::Value lane = e.create<mlir::arith::SubIOp>(loc, j, first);
                                return e.create<mlir::vector::LoadOp>(
                                    loc, chunkType, memory,
                                    mlir::ValueRange{
                                        m.add(e, keyRows, m.add(e, m.mul(e, lane, rowWidth), c))});
                              },
                              [&](mlir::OpBuilder& e, size_t k, mlir::Value j) -> mlir::Value {
                                mlir::Value lane = e.create<mlir::arith::SubIOp>(loc, j, first);
                                return e.create<mlir::memref::LoadOp>(
                                    loc, memory,
                                    m.add(e, weights,
                                          m.add(e, m.mul(e, rowIndex[k], block), lane)));
                              });
                          for (int64_t k = 0; k < kRowGroup; ++k) {
                            cb.create<mlir::vector::StoreOp>(loc, sums[k], memory,
                                                             mlir::ValueRange{slots[k]});
                          }
                          cb.create<mlir::scf::YieldOp>(loc);
                        });
                    gb.create<mlir::scf::YieldOp>(loc);
                  });
              in.create<mlir::scf::YieldOp>(loc);
            });
        forEachIndex(at, loc, mlir::ValueRange{rows, g.depth()},
                     [&](mlir::OpBuilder& e, mlir::ValueRange rd) {
                       mlir::Value sum = e.create<mlir::memref::LoadOp>(
                           loc, memory,
                           m.add(e, queryGradient, m.add(e, m.mul(e, rd[0], rowWidth), rd[1])));
                       store(e, loc, sum, op.getGradQuery(),
                             {batch, head, m.add(e, firstQuery, rd[0]), rd[1]});
                     });
        at.create<mlir::memref::DeallocOp>(loc, memory);
      });
}

}  // namespace

// dQ by blocks of query rows, dK and dV by blocks of keys, each block's scores in vector lanes;
// every output element sums its terms in f32 in the fixed order above. Blocks run in parallel.
void lowerAttentionBackward(mlir::OpBuilder& b, tile::AttentionBackwardOp op,
                            ParallelLoops& parallel) {
  Gradients g(b, op);
  mlir::Value scale = lowering::attentionScale(b, op.getLoc(), g.spec(), g.depth());
  lowerQueryGradients(b, g, scale, parallel);
  lowerKeyGradients(b, g, scale, parallel);
}

}  // namespace host

namespace device {

// The baseline: one thread per element of dQ, dK and dV, each summing its terms in the same
// fixed order as the host in an f32 register (three launches).
void lowerAttentionBackward(mlir::OpBuilder& b, tile::AttentionBackwardOp op, KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  Gradients g(b, op);
  auto zero = [&](mlir::OpBuilder& at) { return lowering::f32Constant(at, loc, 0.0f); };

  // dQ[b, h, i, d] = scale Σ_j dS_ij K[j, d].
  mlir::Value queryElements =
      lowering::product(b, loc, {g.batches(), g.heads(), g.queries(), g.depth()});
  launchPerElement(
      b, loc, queryElements, namer.next("attention_backward_dq"),
      [&](mlir::OpBuilder& in, mlir::Value linear) {
        auto position = lowering::delinearize(in, loc, linear,
                                              {g.batches(), g.heads(), g.queries(), g.depth()});
        mlir::Value batch = position[0], head = position[1], query = position[2], d = position[3];
        mlir::Value kvHead = in.create<mlir::arith::DivUIOp>(loc, head, g.group(in));
        mlir::Value scale = lowering::attentionScale(in, loc, g.spec(), g.depth());
        lowering::KeyRange range = g.visible(in, batch, query);
        mlir::Value rowDelta = g.delta(in, batch, head, query);
        auto keys = in.create<mlir::scf::ForOp>(
            loc, range.first, range.end, indexConstant(in, loc, 1), mlir::ValueRange{zero(in)},
            [&](mlir::OpBuilder& kb, mlir::Location, mlir::Value key, mlir::ValueRange acc) {
              Gradients::Terms t = g.terms(kb, batch, head, kvHead, query, key, rowDelta, scale);
              mlir::Value term = kb.create<mlir::arith::MulFOp>(
                  loc, kb.create<mlir::arith::MulFOp>(loc, t.score, scale),
                  lowering::loadAsF32(kb, loc, op.getKey(), {batch, kvHead, key, d}));
              kb.create<mlir::scf::YieldOp>(
                  loc, mlir::ValueRange{kb.create<mlir::arith::AddFOp>(loc, acc[0], term)});
            });
        store(in, loc, keys.getResult(0), op.getGradQuery(), {batch, head, query, d});
      });

  // dK[b, g, j, d] = scale Σ dS_ij Q[i, d] and dV[b, g, j, e] = Σ Z P_ij dO[i, e].
  for (const bool value : {false, true}) {
    mlir::Value width = value ? g.valueDepth() : g.depth();
    mlir::Value elements = lowering::product(b, loc, {g.batches(), g.kvHeads(), g.keys(), width});
    launchPerElement(
        b, loc, elements, namer.next(value ? "attention_backward_dv" : "attention_backward_dk"),
        [&](mlir::OpBuilder& in, mlir::Value linear) {
          auto position =
              lowering::delinearize(in, loc, linear, {g.batches(), g.kvHeads(), g.keys(), width});
          mlir::Value batch = position[0], kvHead = position[1], key = position[2];
          mlir::Value column = position[3];
          mlir::Value scale = lowering::attentionScale(in, loc, g.spec(), g.depth());
          auto sums = forEachQueryOfKey(
              in, g, batch, kvHead, key, mlir::ValueRange{zero(in)},
              [&](mlir::OpBuilder& qb, mlir::Value head, mlir::Value query,
                  mlir::ValueRange acc) -> llvm::SmallVector<mlir::Value> {
                mlir::Value rowDelta = g.delta(qb, batch, head, query);
                Gradients::Terms t = g.terms(qb, batch, head, kvHead, query, key, rowDelta, scale);
                mlir::Value term =
                    value ? qb.create<mlir::arith::MulFOp>(
                                  loc, t.kept,
                                  lowering::loadAsF32(qb, loc, op.getGradOutput(),
                                                      {batch, head, query, column}))
                                .getResult()
                          : qb.create<mlir::arith::MulFOp>(
                                  loc, qb.create<mlir::arith::MulFOp>(loc, t.score, scale),
                                  lowering::loadAsF32(qb, loc, op.getQuery(),
                                                      {batch, head, query, column}))
                                .getResult();
                return {qb.create<mlir::arith::AddFOp>(loc, acc[0], term).getResult()};
              });
          store(in, loc, sums[0], value ? op.getGradValue() : op.getGradKey(),
                {batch, kvHead, key, column});
        });
  }
}

namespace {

/// Columns each lane of warp_per_row accumulates per pass over a row's columns.
constexpr int64_t kColumnsPerLane = 4;
constexpr int64_t kPassColumns = kWarp * kColumnsPerLane;

/// Σ_w x[xRow, w] · y[yRow, w] by a warp: lane l folds w = l, l + 32, ... ascending, then the
/// fixed butterfly; every lane gets the sum.
mlir::Value warpDot(mlir::OpBuilder& b, mlir::Location loc, mlir::Value lane, mlir::Value size,
                    mlir::Value x, llvm::ArrayRef<mlir::Value> xRow, mlir::Value y,
                    llvm::ArrayRef<mlir::Value> yRow) {
  mlir::Value partial = foldStrided(
      b, loc, lane, size, lowering::f32Constant(b, loc, 0.0f),
      [&](mlir::OpBuilder& in, mlir::Value sum, mlir::Value w) -> mlir::Value {
        mlir::Value product = in.create<mlir::arith::MulFOp>(
            loc, lowering::loadAsF32(in, loc, x, lowering::append(xRow, w)),
            lowering::loadAsF32(in, loc, y, lowering::append(yRow, w)));
        return in.create<mlir::arith::AddFOp>(loc, sum, product);
      },
      kWarp);
  return warpReduce(b, loc, tile::ReduceKind::sum, partial);
}

/// warpDot as a Gradients::Dot for the lanes of one warp.
struct WarpDot {
  mlir::Location loc;
  mlir::Value lane;
  mlir::Value operator()(mlir::OpBuilder& b, mlir::Value size, mlir::Value x,
                         llvm::ArrayRef<mlir::Value> xRow, mlir::Value y,
                         llvm::ArrayRef<mlir::Value> yRow) const {
    return warpDot(b, loc, lane, size, x, xRow, y, yRow);
  }
};

/// Column `column` of row `row` of `memref` as f32, 0 past `size`.
mlir::Value loadColumn(mlir::OpBuilder& b, mlir::Location loc, mlir::Value memref,
                       llvm::ArrayRef<mlir::Value> row, mlir::Value column, mlir::Value size) {
  auto value = b.create<mlir::scf::IfOp>(
      loc, lessThan(b, loc, column, size),
      [&](mlir::OpBuilder& t, mlir::Location) {
        t.create<mlir::scf::YieldOp>(
            loc, lowering::loadAsF32(t, loc, memref, lowering::append(row, column)));
      },
      [&](mlir::OpBuilder& e, mlir::Location) {
        e.create<mlir::scf::YieldOp>(loc, lowering::f32Constant(e, loc, 0.0f));
      });
  return value.getResult(0);
}

/// Column pass + 32 r + lane, the r-th a lane accumulates in a pass.
mlir::Value passColumn(mlir::OpBuilder& b, mlir::Location loc, mlir::Value pass, int64_t r,
                       mlir::Value lane) {
  return b.create<mlir::arith::AddIOp>(
      loc, pass, b.create<mlir::arith::AddIOp>(loc, indexConstant(b, loc, r * kWarp), lane));
}

/// Runs `body(pass)` for pass = 0, kPassColumns, ... < width: the passes over a row's columns.
void forEachPass(mlir::OpBuilder& b, mlir::Location loc, mlir::Value width,
                 llvm::function_ref<void(mlir::OpBuilder&, mlir::Value pass)> body) {
  b.create<mlir::scf::ForOp>(
      loc, indexConstant(b, loc, 0), width, indexConstant(b, loc, kPassColumns), mlir::ValueRange{},
      [&](mlir::OpBuilder& in, mlir::Location, mlir::Value pass, mlir::ValueRange) {
        body(in, pass);
        in.create<mlir::scf::YieldOp>(loc);
      });
}

}  // namespace

// warp_per_row: one warp per row of dQ (B·H·Sq) and one per row of dK and dV together
// (B·Hkv·Sk). A pair's dot products are folded by the lanes (w strided by 32) and a fixed
// butterfly; each lane accumulates kColumnsPerLane columns of the row per pass, over the
// pairs in the baseline's order (keys ascending; heads, then queries, ascending).
void lowerAttentionBackwardWarpPerRow(mlir::OpBuilder& b, tile::AttentionBackwardOp op,
                                      KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  Gradients g(b, op);
  auto zeros = [&](mlir::OpBuilder& at, int64_t count) {
    return llvm::SmallVector<mlir::Value>(count, lowering::f32Constant(at, loc, 0.0f));
  };

  mlir::Value queryRows = lowering::product(b, loc, {g.batches(), g.heads(), g.queries()});
  launchPerWarp(
      b, loc, queryRows, namer.next("attention_backward_dq_warp_per_row"),
      [&](mlir::OpBuilder& k, mlir::Value lane, mlir::Value unit) {
        const WarpDot dot{loc, lane};
        auto position = lowering::delinearize(k, loc, unit, {g.batches(), g.heads(), g.queries()});
        mlir::Value batch = position[0], head = position[1], query = position[2];
        mlir::Value kvHead = k.create<mlir::arith::DivUIOp>(loc, head, g.group(k));
        mlir::Value scale = lowering::attentionScale(k, loc, g.spec(), g.depth());
        lowering::KeyRange range = g.visible(k, batch, query);
        mlir::Value rowDelta = dot(k, g.valueDepth(), op.getGradOutput(), {batch, head, query},
                                   op.getOutput(), {batch, head, query});
        forEachPass(k, loc, g.depth(), [&](mlir::OpBuilder& p, mlir::Value pass) {
          auto keys = p.create<mlir::scf::ForOp>(
              loc, range.first, range.end, indexConstant(p, loc, 1), zeros(p, kColumnsPerLane),
              [&](mlir::OpBuilder& kb, mlir::Location, mlir::Value key, mlir::ValueRange acc) {
                Gradients::Terms t =
                    g.terms(kb, batch, head, kvHead, query, key, rowDelta, scale, dot);
                mlir::Value weight = kb.create<mlir::arith::MulFOp>(loc, t.score, scale);
                llvm::SmallVector<mlir::Value> next;
                for (int64_t r = 0; r < kColumnsPerLane; ++r) {
                  mlir::Value x = loadColumn(kb, loc, op.getKey(), {batch, kvHead, key},
                                             passColumn(kb, loc, pass, r, lane), g.depth());
                  next.push_back(kb.create<mlir::arith::AddFOp>(
                      loc, acc[r], kb.create<mlir::arith::MulFOp>(loc, weight, x)));
                }
                kb.create<mlir::scf::YieldOp>(loc, next);
              });
          for (int64_t r = 0; r < kColumnsPerLane; ++r) {
            mlir::Value column = passColumn(p, loc, pass, r, lane);
            ifThen(p, loc, lessThan(p, loc, column, g.depth()), [&](mlir::OpBuilder& in) {
              store(in, loc, keys.getResult(r), op.getGradQuery(), {batch, head, query, column});
            });
          }
        });
      });

  mlir::Value keyRows = lowering::product(b, loc, {g.batches(), g.kvHeads(), g.keys()});
  launchPerWarp(
      b, loc, keyRows, namer.next("attention_backward_dkv_warp_per_row"),
      [&](mlir::OpBuilder& k, mlir::Value lane, mlir::Value unit) {
        const WarpDot dot{loc, lane};
        auto position = lowering::delinearize(k, loc, unit, {g.batches(), g.kvHeads(), g.keys()});
        mlir::Value batch = position[0], kvHead = position[1], key = position[2];
        mlir::Value scale = lowering::attentionScale(k, loc, g.spec(), g.depth());
        mlir::Value width = k.create<mlir::arith::MaxUIOp>(loc, g.depth(), g.valueDepth());
        forEachPass(k, loc, width, [&](mlir::OpBuilder& p, mlir::Value pass) {
          // Accumulators: kColumnsPerLane of dK, then kColumnsPerLane of dV.
          auto sums = forEachQueryOfKey(
              p, g, batch, kvHead, key, zeros(p, 2 * kColumnsPerLane),
              [&](mlir::OpBuilder& qb, mlir::Value head, mlir::Value query,
                  mlir::ValueRange acc) -> llvm::SmallVector<mlir::Value> {
                mlir::Value rowDelta =
                    dot(qb, g.valueDepth(), op.getGradOutput(), {batch, head, query},
                        op.getOutput(), {batch, head, query});
                Gradients::Terms t =
                    g.terms(qb, batch, head, kvHead, query, key, rowDelta, scale, dot);
                mlir::Value weight = qb.create<mlir::arith::MulFOp>(loc, t.score, scale);
                llvm::SmallVector<mlir::Value> next;
                for (const bool value : {false, true}) {
                  for (int64_t r = 0; r < kColumnsPerLane; ++r) {
                    mlir::Value x = loadColumn(
                        qb, loc, value ? op.getGradOutput() : op.getQuery(), {batch, head, query},
                        passColumn(qb, loc, pass, r, lane), value ? g.valueDepth() : g.depth());
                    next.push_back(qb.create<mlir::arith::AddFOp>(
                        loc, acc[(value ? kColumnsPerLane : 0) + r],
                        qb.create<mlir::arith::MulFOp>(loc, value ? t.kept : weight, x)));
                  }
                }
                return next;
              });
          for (const bool value : {false, true}) {
            for (int64_t r = 0; r < kColumnsPerLane; ++r) {
              mlir::Value column = passColumn(p, loc, pass, r, lane);
              ifThen(p, loc, lessThan(p, loc, column, value ? g.valueDepth() : g.depth()),
                     [&](mlir::OpBuilder& in) {
                       store(in, loc, sums[(value ? kColumnsPerLane : 0) + r],
                             value ? op.getGradValue() : op.getGradKey(),
                             {batch, kvHead, key, column});
                     });
            }
          }
        });
      });
}

}  // namespace device
}  // namespace tessera
