#include "runtime/entry_contract.h"

#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tessera::runtime {
namespace {

int64_t ValueOf(const SizeSource& source, absl::Span<const PassedArgument> arguments) {
  switch (source.kind) {
    case SizeSource::Kind::kDimension:
      return arguments[source.argument].sizes[source.dim];
    case SizeSource::Kind::kScalar:
      return arguments[source.argument].value;
    case SizeSource::Kind::kConstant:
      return source.value;
  }
  return source.value;
}

/// "dimension 0 of argument #3 'out'", "argument #0 'n'".
std::string DescribeSource(const EntryFunction& entry, const SizeSource& source) {
  if (source.kind == SizeSource::Kind::kDimension) {
    return absl::StrCat("dimension ", source.dim, " of ", DescribeArgument(entry, source.argument));
  }
  return DescribeArgument(entry, source.argument);
}

/// Whether tensor arguments `a` and `b` have the same shape and element size.
bool SameElements(const EntryFunction& entry, int64_t a, int64_t b,
                  absl::Span<const PassedArgument> arguments) {
  const EntryArgument& x = entry.arguments[a];
  const EntryArgument& y = entry.arguments[b];
  if (x.rank != y.rank || (x.element.bits + 7) / 8 != (y.element.bits + 7) / 8) return false;
  for (int64_t d = 0; d < x.rank; ++d) {
    if (arguments[a].sizes[d] != arguments[b].sizes[d]) return false;
  }
  return true;
}

}  // namespace

std::string DescribeArgument(const EntryFunction& entry, size_t index) {
  const std::string& name = entry.arguments[index].name;
  if (name.empty()) return absl::StrCat("argument #", index);
  return absl::StrCat("argument #", index, " '", name, "'");
}

bool SizesRelate(SizeRelation relation, int64_t found, int64_t expected) {
  // Sizes from scalar arguments may be negative (their allocations refuse them later); only
  // equality is meaningful for them, and the arithmetic below must not overflow or trap.
  if (relation != SizeRelation::kEqual && (found < 0 || expected < 0)) return false;
  switch (relation) {
    case SizeRelation::kEqual:
      return found == expected;
    case SizeRelation::kBroadcasts:
      return found == expected || found == 1;
    case SizeRelation::kTwice:
      return expected <= std::numeric_limits<int64_t>::max() / 2 && found == 2 * expected;
    case SizeRelation::kMultipleOf:
      return expected == 0 ? found == 0 : found % expected == 0;
    case SizeRelation::kAtMost:
      return found <= expected;
  }
  return false;
}

void DeriveSizeSources(EntryFunction& entry) {
  for (EntryArgument& argument : entry.arguments) {
    argument.size_from.assign(
        argument.kind == EntryArgument::Kind::kMemRef ? static_cast<size_t>(argument.rank) : 0, -1);
  }
  for (const SizeConstraint& constraint : entry.size_constraints) {
    if (constraint.relation != SizeRelation::kEqual) continue;
    for (const auto& [dim, scalar] : {std::pair(&constraint.size, &constraint.must_equal),
                                      std::pair(&constraint.must_equal, &constraint.size)}) {
      if (dim->kind != SizeSource::Kind::kDimension || scalar->kind != SizeSource::Kind::kScalar) {
        continue;
      }
      std::vector<int64_t>& from = entry.arguments[dim->argument].size_from;
      if (dim->dim >= 0 && dim->dim < static_cast<int64_t>(from.size()) && from[dim->dim] < 0) {
        from[dim->dim] = scalar->argument;
      }
    }
  }
}

absl::Status CheckShapeContract(const EntryFunction& entry,
                                absl::Span<const PassedArgument> arguments) {
  for (const SizeConstraint& constraint : entry.size_constraints) {
    const int64_t found = ValueOf(constraint.size, arguments);
    const int64_t expected = ValueOf(constraint.must_equal, arguments);
    if (SizesRelate(constraint.relation, found, expected)) continue;
    const SizeSource& other = constraint.must_equal;
    std::string against;
    if (constraint.relation == SizeRelation::kTwice) {
      against =
          absl::StrCat("it must be twice ", DescribeSource(entry, other), " (", expected, ")");
    } else if (constraint.relation == SizeRelation::kAtMost) {
      against = absl::StrCat("it must be at most ", expected);
    } else if (constraint.relation == SizeRelation::kMultipleOf) {
      against = absl::StrCat("it must be a multiple of ", DescribeSource(entry, other), " (",
                             expected, ")");
    } else if (other.kind == SizeSource::Kind::kConstant) {
      against = absl::StrCat("it must be ", expected);
    } else if (other.kind == SizeSource::Kind::kDimension &&
               constraint.size.kind == SizeSource::Kind::kDimension &&
               other.dim == constraint.size.dim) {
      against = absl::StrCat(DescribeArgument(entry, other.argument), " has ", expected);
    } else {
      against = absl::StrCat(DescribeSource(entry, other), " is ", expected);
    }
    if (constraint.relation == SizeRelation::kBroadcasts) {
      against = absl::StrCat(against, " (it must be 1 or that)");
    }
    return absl::InvalidArgumentError(
        absl::StrCat("@", entry.name, ": ", DescribeSource(entry, constraint.size), " is ", found,
                     " but ", against, ": ", constraint.reason));
  }
  return absl::OkStatus();
}

absl::Status CheckArgumentOverlaps(const EntryFunction& entry,
                                   absl::Span<const PassedArgument> arguments) {
  for (const ArgumentOverlap& overlap : entry.overlaps) {
    const PassedArgument& written = arguments[overlap.written];
    const PassedArgument& other = arguments[overlap.other];
    const bool disjoint = written.begin == written.end || other.begin == other.end ||
                          written.end <= other.begin || other.end <= written.begin;
    if (disjoint) continue;
    // The same buffer means the same bytes as the same elements: a broadcast input of tile.map
    // (1 x N f32) spanning the bytes of its output (2 x N f16) is read after its first row is
    // written.
    const bool same_bytes = written.begin == other.begin && written.end == other.end;
    const bool same = same_bytes && SameElements(entry, overlap.written, overlap.other, arguments);
    if (same && overlap.same_buffer_allowed) continue;
    const char* relation = same         ? "is the same buffer as "
                           : same_bytes ? "spans the bytes, as other elements, of "
                                        : "overlaps ";
    return absl::InvalidArgumentError(
        absl::StrCat("@", entry.name, ": ", DescribeArgument(entry, overlap.written), " (written) ",
                     relation, DescribeArgument(entry, overlap.other), " (bytes 0x",
                     absl::Hex(written.begin), "-0x", absl::Hex(written.end), " and 0x",
                     absl::Hex(other.begin), "-0x", absl::Hex(other.end), "): ", overlap.reason,
                     overlap.same_buffer_allowed ? "; pass the same buffer or disjoint ones"
                                                 : "; pass a buffer of its own"));
  }
  return absl::OkStatus();
}

}  // namespace tessera::runtime
