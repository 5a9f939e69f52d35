#include "jit/delegates/gemm_extents.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/delegates/c_signatures.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace tessera::jit::delegates {
namespace {

/// Where each GEMM parameter is among the kernel_call's operands.
struct GemmOperands {
  int layout = -1;  ///< -1: always column-major (cuBLAS)
  int trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc;
};

class Guard {
 public:
  Guard(mlir::OpBuilder& b, nvidia::KernelCallOp call) : b_(b), call_(call), loc_(call.getLoc()) {}

  void Run(const GemmOperands& at, bool cblas) {
    auto arg = [&](int index) { return Wide(call_.getArgs()[index]); };
    mlir::Value m = arg(at.m), n = arg(at.n), k = arg(at.k);
    Check(And(Ge(m, I64(0)), And(Ge(n, I64(0)), Ge(k, I64(0)))), "M, N and K must be >= 0");
    mlir::Value column_major = cblas ? Eq(arg(at.layout), I64(kCblasColMajor)) : True();
    if (cblas) {
      mlir::Value layout = arg(at.layout);
      Check(Or(Eq(layout, I64(kCblasRowMajor)), column_major),
            "the layout must be CblasRowMajor (101) or CblasColMajor (102)");
    }
    const int no_trans = cblas ? kCblasNoTrans : kCublasOpN;
    const int last_trans = cblas ? kCblasConjTrans : kCublasOpC;
    mlir::Value trans_a = arg(at.trans_a), trans_b = arg(at.trans_b);
    for (mlir::Value trans : {trans_a, trans_b}) {
      Check(And(Ge(trans, I64(no_trans)), Le(trans, I64(last_trans))),
            "a transpose code is not one the library defines");
    }
    // Each matrix as stored: (rows, columns) of op(X) or of X itself.
    Matrix(call_.getArgs()[at.a], arg(at.lda), Ne(trans_a, I64(no_trans)), m, k, column_major, "A");
    Matrix(call_.getArgs()[at.b], arg(at.ldb), Ne(trans_b, I64(no_trans)), k, n, column_major, "B");
    Matrix(call_.getArgs()[at.c], arg(at.ldc), False(), m, n, column_major, "C");
  }

 private:
  /// Checks a matrix that is rows×columns (columns×rows when `transposed`), stored with leading
  /// dimension `ld` in `buffer`.
  void Matrix(mlir::Value buffer, mlir::Value ld, mlir::Value transposed, mlir::Value rows,
              mlir::Value columns, mlir::Value column_major, const char* name) {
    mlir::Value stored_rows = Select(transposed, columns, rows);
    mlir::Value stored_columns = Select(transposed, rows, columns);
    mlir::Value inner = Select(column_major, stored_rows, stored_columns);
    mlir::Value outer = Select(column_major, stored_columns, stored_rows);
    Check(And(Ge(ld, I64(1)), Ge(ld, inner)),
          absl::StrCat("the leading dimension of ", name, " is smaller than its rows or columns"));
    // (outer - 1) * ld + inner ≤ elements, for a non-empty matrix: all operands < 2^31.
    mlir::Value empty = Or(Eq(outer, I64(0)), Eq(inner, I64(0)));
    mlir::Value span = mlir::arith::AddIOp::create(
        b_, loc_,
        mlir::arith::MulIOp::create(b_, loc_, mlir::arith::SubIOp::create(b_, loc_, outer, I64(1)),
                                    ld),
        inner);
    Check(Or(empty, Le(span, Elements(buffer))),
          absl::StrCat("the sizes given for ", name, " reach past its buffer"));
  }

  mlir::Value Elements(mlir::Value buffer) {
    auto type = llvm::cast<mlir::MemRefType>(buffer.getType());
    mlir::Value count = I64(1);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      mlir::Value size = mlir::memref::DimOp::create(b_, loc_, buffer, d);
      count = mlir::arith::MulIOp::create(b_, loc_, count, Wide(size));
    }
    return count;
  }

  mlir::Value Wide(mlir::Value value) {
    if (value.getType().isIndex()) {
      return mlir::arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), value);
    }
    if (value.getType().isInteger(64)) return value;
    return mlir::arith::ExtSIOp::create(b_, loc_, b_.getI64Type(), value);
  }
  mlir::Value I64(int64_t value) { return mlir::arith::ConstantIntOp::create(b_, loc_, value, 64); }
  mlir::Value True() { return mlir::arith::ConstantIntOp::create(b_, loc_, 1, 1); }
  mlir::Value False() { return mlir::arith::ConstantIntOp::create(b_, loc_, 0, 1); }
  mlir::Value Compare(mlir::arith::CmpIPredicate predicate, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b_, loc_, predicate, x, y);
  }
  mlir::Value Ge(mlir::Value x, mlir::Value y) {
    return Compare(mlir::arith::CmpIPredicate::sge, x, y);
  }
  mlir::Value Le(mlir::Value x, mlir::Value y) {
    return Compare(mlir::arith::CmpIPredicate::sle, x, y);
  }
  mlir::Value Eq(mlir::Value x, mlir::Value y) {
    return Compare(mlir::arith::CmpIPredicate::eq, x, y);
  }
  mlir::Value Ne(mlir::Value x, mlir::Value y) {
    return Compare(mlir::arith::CmpIPredicate::ne, x, y);
  }
  mlir::Value And(mlir::Value x, mlir::Value y) {
    return mlir::arith::AndIOp::create(b_, loc_, x, y);
  }
  mlir::Value Or(mlir::Value x, mlir::Value y) {
    return mlir::arith::OrIOp::create(b_, loc_, x, y);
  }
  mlir::Value Select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b_, loc_, c, x, y);
  }
  void Check(mlir::Value ok, const std::string& why) {
    mlir::cf::AssertOp::create(
        b_, loc_, ok, b_.getStringAttr(absl::StrCat("'", call_.getCallee().str(), "': ", why)));
  }

  mlir::OpBuilder& b_;
  nvidia::KernelCallOp call_;
  mlir::Location loc_;
};

}  // namespace

bool GuardGemmExtents(mlir::OpBuilder& b, nvidia::KernelCallOp call) {
  const llvm::StringRef callee = call.getCallee();
  // cblas_?gemm(layout, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
  static constexpr GemmOperands kCblas{0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 12, 13};
  // cublas?gemm_v2(handle, ta, tb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc), handle
  // not among the operands
  static constexpr GemmOperands kCublas{-1, 0, 1, 2, 3, 4, 6, 7, 8, 9, 11, 12};
  const bool cblas = callee == "cblas_sgemm" || callee == "cblas_dgemm";
  const bool cublas = callee == "cublasSgemm_v2" || callee == "cublasDgemm_v2";
  if (!cblas && !cublas) return false;
  mlir::OpBuilder::InsertionGuard keep(b);
  b.setInsertionPoint(call);
  Guard(b, call).Run(cblas ? kCblas : kCublas, cblas);
  return true;
}

}  // namespace tessera::jit::delegates
