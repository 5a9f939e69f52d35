// The lowerings of tile.attention_backward, host and device, and the gradient terms they share.
// Every output element is summed by one iteration (host: a row of dQ, dK or dV in f32
// accumulators; device: one thread per element) in a fixed order — keys ascending for dQ, then
// for dK/dV the query heads of the KV head and their queries ascending — so the result is
// bit-identical run to run, for any thread count, and batch-invariant. The probabilities are
// recomputed from the saved log-sum-exp (no Sq x Sk buffer).
#include <limits>

#include "dialect/transforms/GpuKernels.h"
#include "dialect/transforms/HostLoops.h"
#include "dialect/transforms/TileSemantics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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

  /// The terms of a visible pair (query i of head `head`, key j of `kvHead`): P = exp(s − lse),
  /// Z (dropout), dP = Z · dO_i·V_j, dS = P (dP − D_i) · (1 − (s/c)²).
  Terms terms(mlir::OpBuilder& b, mlir::Value batch, mlir::Value head, mlir::Value kvHead,
              mlir::Value query, mlir::Value key, mlir::Value rowDelta,
              mlir::Value scale) const {
    mlir::Location loc = op_.getLoc();
    mlir::Value raw =
        dot(b, depth(), op_.getQuery(), {batch, head, query}, op_.getKey(), {batch, kvHead, key});
    mlir::Value bias = spec_.getBias()
                           ? lowering::attentionBias(b, loc, spec_, batch, head, query, key)
                           : mlir::Value();
    mlir::Value s = lowering::attentionScore(b, loc, spec_, raw, scale, bias);
    mlir::Value lse = b.create<mlir::memref::LoadOp>(
        loc, op_.getLse(), mlir::ValueRange{batch, head, query});
    mlir::Value zero = lowering::f32Constant(b, loc, 0.0f);
    // A row whose lse is not finite (every visible score -inf: a bias that masks the whole row)
    // contributes nothing, whatever its dO and its NaN output.
    mlir::Value finite = b.create<mlir::arith::CmpFOp>(
        loc, mlir::arith::CmpFPredicate::OLT,
        b.create<mlir::math::AbsFOp>(loc, lse),
        lowering::f32Constant(b, loc, std::numeric_limits<float>::infinity()));
    mlir::Value p = b.create<mlir::arith::SelectOp>(
        loc, finite, b.create<mlir::math::ExpOp>(loc, b.create<mlir::arith::SubFOp>(loc, s, lse)),
        zero);
    const mlir::Value sizes[] = {batches(), heads(), queries(), keys()};
    // Z: 1 without dropout, else 1/(1 − p) where the forward kept the weight and 0 where not.
    mlir::Value z = lowering::droppedWeight(b, loc, spec_, lowering::f32Constant(b, loc, 1.0f),
                                            {batch, head, query, key}, sizes);
    mlir::Value kept = b.create<mlir::arith::MulFOp>(loc, z, p);
    mlir::Value dp = b.create<mlir::arith::MulFOp>(
        loc, z,
        dot(b, valueDepth(), op_.getGradOutput(), {batch, head, query}, op_.getValue(),
            {batch, kvHead, key}));
    mlir::Value ds = b.create<mlir::arith::MulFOp>(
        loc, p, b.create<mlir::arith::SubFOp>(loc, dp, rowDelta));
    const double cap = spec_.getSoftcapOrZero();
    if (cap > 0) {
      mlir::Value ratio = b.create<mlir::arith::DivFOp>(
          loc, s, lowering::f32Constant(b, loc, static_cast<float>(cap)));
      mlir::Value derivative = b.create<mlir::arith::SubFOp>(
          loc, lowering::f32Constant(b, loc, 1.0f),
          b.create<mlir::arith::MulFOp>(loc, ratio, ratio));
      ds = b.create<mlir::arith::MulFOp>(loc, ds, derivative);
    }
    // A pair of weight 0 (a masked key, an underflow, a row that contributes nothing) has
    // dS = 0, also where dP − D or the cap's derivative is not finite.
    mlir::Value none = b.create<mlir::arith::CmpFOp>(loc, mlir::arith::CmpFPredicate::OEQ, p, zero);
    ds = b.create<mlir::arith::SelectOp>(loc, none, zero, ds);
    return {kept, ds};
  }

  /// Whether key `key` is among the keys query `query` of `batch` sees (i1).
  mlir::Value sees(mlir::OpBuilder& b, mlir::Value batch, mlir::Value query, mlir::Value key) const {
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

// Per row: dQ rows (B·H·Sq) accumulate scale · dS_ij · K_j over their visible keys into an f32
// heap row; dK/dV rows (B·Hkv·Sk) accumulate scale · dS_ij · Q_i and Z P_ij · dO_i over the
// queries that see them. Rows run in parallel.
void lowerAttentionBackward(mlir::OpBuilder& b, tile::AttentionBackwardOp op,
                            ParallelLoops& parallel) {
  mlir::Location loc = op.getLoc();
  Gradients g(b, op);
  mlir::Value scale = lowering::attentionScale(b, loc, g.spec(), g.depth());
  mlir::Type f32 = b.getF32Type();
  auto buffer = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, f32);
  mlir::Value zero = lowering::f32Constant(b, loc, 0.0f);
  auto add = [&](mlir::OpBuilder& at, mlir::Value x, mlir::Value y) -> mlir::Value {
    return at.create<mlir::arith::AddIOp>(loc, x, y);
  };
  // Adds `weight · row[d]` of `source` at `index` to the accumulators at `at` + d, d < size.
  auto accumulate = [&](mlir::OpBuilder& in, mlir::Value accumulators, mlir::Value at,
                        mlir::Value size, mlir::Value weight, mlir::Value source,
                        llvm::ArrayRef<mlir::Value> index) {
    forEachIndex(in, loc, mlir::ValueRange{size}, [&](mlir::OpBuilder& e, mlir::ValueRange d) {
      llvm::SmallVector<mlir::Value> element(index.begin(), index.end());
      element.push_back(d[0]);
      mlir::Value slot = add(e, at, d[0]);
      mlir::Value sum = e.create<mlir::memref::LoadOp>(loc, accumulators, slot);
      mlir::Value term = e.create<mlir::arith::MulFOp>(
          loc, weight, lowering::loadAsF32(e, loc, source, element));
      e.create<mlir::memref::StoreOp>(loc, e.create<mlir::arith::AddFOp>(loc, sum, term),
                                      accumulators, slot);
    });
  };
  auto zeroFill = [&](mlir::OpBuilder& in, mlir::Value accumulators, mlir::Value size) {
    forEachIndex(in, loc, mlir::ValueRange{size}, [&](mlir::OpBuilder& e, mlir::ValueRange d) {
      e.create<mlir::memref::StoreOp>(loc, zero, accumulators, d);
    });
  };
  auto storeRow = [&](mlir::OpBuilder& in, mlir::Value accumulators, mlir::Value at,
                      mlir::Value size, mlir::Value memref, llvm::ArrayRef<mlir::Value> index) {
    forEachIndex(in, loc, mlir::ValueRange{size}, [&](mlir::OpBuilder& e, mlir::ValueRange d) {
      llvm::SmallVector<mlir::Value> element(index.begin(), index.end());
      element.push_back(d[0]);
      store(e, loc, e.create<mlir::memref::LoadOp>(loc, accumulators, add(e, at, d[0])), memref,
            element);
    });
  };

  // dQ.
  mlir::Value queryRows = lowering::product(b, loc, {g.batches(), g.heads(), g.queries()});
  mlir::Value cost = b.create<mlir::arith::MulIOp>(
      loc, g.keys(), add(b, g.depth(), g.valueDepth()));
  parallelForEachIndex(b, loc, mlir::ValueRange{queryRows}, cost, parallel,
                       [&](mlir::OpBuilder& at, mlir::ValueRange linear) {
    auto position = lowering::delinearize(at, loc, linear[0], {g.batches(), g.heads(), g.queries()});
    mlir::Value batch = position[0], head = position[1], query = position[2];
    mlir::Value kvHead = at.create<mlir::arith::DivUIOp>(loc, head, g.group(at));
    mlir::Value row = at.create<mlir::memref::AllocOp>(loc, buffer, mlir::ValueRange{g.depth()});
    zeroFill(at, row, g.depth());
    lowering::KeyRange range = g.visible(at, batch, query);
    mlir::Value rowDelta = g.delta(at, batch, head, query);
    at.create<mlir::scf::ForOp>(
        loc, range.first, range.end, indexConstant(at, loc, 1), mlir::ValueRange{},
        [&](mlir::OpBuilder& in, mlir::Location, mlir::Value key, mlir::ValueRange) {
          Gradients::Terms t = g.terms(in, batch, head, kvHead, query, key, rowDelta, scale);
          mlir::Value weight = in.create<mlir::arith::MulFOp>(loc, t.score, scale);
          accumulate(in, row, indexConstant(in, loc, 0), g.depth(), weight, op.getKey(),
                     {batch, kvHead, key});
          in.create<mlir::scf::YieldOp>(loc);
        });
    storeRow(at, row, indexConstant(at, loc, 0), g.depth(), op.getGradQuery(),
             {batch, head, query});
    at.create<mlir::memref::DeallocOp>(loc, row);
  });

  // dK and dV.
  mlir::Value keyRows = lowering::product(b, loc, {g.batches(), g.kvHeads(), g.keys()});
  mlir::Value keyCost = b.create<mlir::arith::MulIOp>(
      loc, b.create<mlir::arith::MulIOp>(loc, g.queries(), g.group(b)),
      add(b, g.depth(), g.valueDepth()));
  parallelForEachIndex(b, loc, mlir::ValueRange{keyRows}, keyCost, parallel,
                       [&](mlir::OpBuilder& at, mlir::ValueRange linear) {
    auto position = lowering::delinearize(at, loc, linear[0], {g.batches(), g.kvHeads(), g.keys()});
    mlir::Value batch = position[0], kvHead = position[1], key = position[2];
    mlir::Value row = at.create<mlir::memref::AllocOp>(
        loc, buffer, mlir::ValueRange{add(at, g.depth(), g.valueDepth())});
    zeroFill(at, row, add(at, g.depth(), g.valueDepth()));
    forEachQueryOfKey(at, g, batch, kvHead, key, mlir::ValueRange{},
                      [&](mlir::OpBuilder& in, mlir::Value head, mlir::Value query,
                          mlir::ValueRange) -> llvm::SmallVector<mlir::Value> {
      mlir::Value rowDelta = g.delta(in, batch, head, query);
      Gradients::Terms t = g.terms(in, batch, head, kvHead, query, key, rowDelta, scale);
      accumulate(in, row, indexConstant(in, loc, 0), g.depth(),
                 in.create<mlir::arith::MulFOp>(loc, t.score, scale), op.getQuery(),
                 {batch, head, query});
      accumulate(in, row, g.depth(), g.valueDepth(), t.kept, op.getGradOutput(),
                 {batch, head, query});
      return {};
    });
    storeRow(at, row, indexConstant(at, loc, 0), g.depth(), op.getGradKey(),
             {batch, kvHead, key});
    storeRow(at, row, g.depth(), g.valueDepth(), op.getGradValue(), {batch, kvHead, key});
    at.create<mlir::memref::DeallocOp>(loc, row);
  });
}

}  // namespace host

namespace device {

// The baseline: one thread per element of dQ, dK and dV, each summing its terms in the same
// fixed order as the host in an f32 register (three launches).
void lowerAttentionBackward(mlir::OpBuilder& b, tile::AttentionBackwardOp op,
                            KernelNamer& namer) {
  mlir::Location loc = op.getLoc();
  Gradients g(b, op);
  auto zero = [&](mlir::OpBuilder& at) { return lowering::f32Constant(at, loc, 0.0f); };

  // dQ[b, h, i, d] = scale Σ_j dS_ij K[j, d].
  mlir::Value queryElements =
      lowering::product(b, loc, {g.batches(), g.heads(), g.queries(), g.depth()});
  launchPerElement(b, loc, queryElements, namer.next("attention_backward_dq"),
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
          auto position = lowering::delinearize(in, loc, linear,
                                                {g.batches(), g.kvHeads(), g.keys(), width});
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

}  // namespace device
}  // namespace tessera
