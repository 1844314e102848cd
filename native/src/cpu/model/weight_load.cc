// Loading one tensor from a model file into its slot (load_weight, weights.h).
//
// The TypeScript side parses and validates the safetensors / GGUF headers
// (names, dtypes, shapes, offsets) against the slots this model reports, and
// then asks for each tensor by file and byte offset. The bytes go straight from
// the file into native memory, chunk by chunk, so the JS heap never holds
// weights. A load is four steps, each a function below:
//   check    the shape matches the slot, the dtype is known and fits it, and
//            what the slot will keep (LoadPlan); nothing is touched before
//   map      a matrix kept as the file has it is used where it lies in the
//            file's mapping (then the load is done)
//   convert  otherwise it is read into memory of its own: copied, widened or
//            quantized row by row, or packed into k-groups as it is read, after
//            a check that the byte range lies inside the file
//   repack   16-bit matrices rewritten in sextets, Q8_0 / Q4_0 in row groups
#include <algorithm>
#include <cstring>
#include <fstream>
#include <new>

#include "base/half.h"
#include "kernels/float/sextets.h"
#include "kernels/quant/kquant/quant_k.h"
#include "kernels/quant/quant.h"
#include "kernels/quant/quant_formats.h"
#include "kernels/quant/quant_repack.h"
#include "model/weights.h"

namespace weft {
namespace {

struct SourceType {
  WeightType type;
  size_t element_bytes;  // 0 for block formats
};

bool parse_dtype(const std::string& dtype, SourceType* out) {
  if (dtype == "F32") *out = {WeightType::F32, 4};
  else if (dtype == "F16") *out = {WeightType::F16, 2};
  else if (dtype == "BF16") *out = {WeightType::BF16, 2};
  else if (dtype == "Q8_0") *out = {WeightType::Q8_0, 0};
  else if (dtype == "Q4_0") *out = {WeightType::Q4_0, 0};
  else if (dtype == "Q4_K") *out = {WeightType::Q4_K, 0};
  else if (dtype == "Q6_K") *out = {WeightType::Q6_K, 0};
  else return false;
  return true;
}

// What the file holds and what the slot keeps, worked out before anything is
// touched.
struct LoadPlan {
  SourceType source;
  WeightType stored;        // the slot's type once loaded
  uint64_t count;           // values (rows * cols)
  size_t row_bytes;         // one row in the file
  uint64_t bytes;           // the tensor in the file
  size_t stored_row_bytes;  // one row as kept (row-major, before any regrouping)
  bool k_grouped;           // Q4_K / Q6_K: kept in k-groups (quant_repack.h), a layout of its own size
  size_t stored_bytes;      // the matrix as kept
};

// ---- check ----

// What the slot keeps: block formats as they are; float matrices quantized
// when asked (and their rows are whole 32-blocks), else 16-bit matrices stay
// 16-bit; vectors become float32.
WeightType stored_type(const Tensor& slot, WeightType source, WeightType quantize_to) {
  if (is_quantized(source)) return source;
  const bool quantize = !slot.vector && is_quantized(quantize_to) && slot.cols % block_format(quantize_to).weights == 0;
  if (quantize) return quantize_to;
  if (slot.vector) return WeightType::F32;
  return source;
}

// "" and *plan, or why this tensor cannot go into this slot.
std::string check_tensor(const Tensor& slot, const std::string& dtype, const std::vector<int64_t>& shape,
                         WeightType quantize_to, LoadPlan* plan) {
  // Shape: [rows, cols] for matrices (even when cols == 1), [rows] for vectors.
  const bool shape_ok = slot.vector ? (shape.size() == 1 && shape[0] == slot.rows)
                                    : (shape.size() == 2 && shape[0] == slot.rows && shape[1] == slot.cols);
  if (!shape_ok) {
    std::string want = "[" + std::to_string(slot.rows) + (slot.vector ? "" : ", " + std::to_string(slot.cols)) + "]";
    return "shape mismatch: expected " + want;
  }
  SourceType source;
  if (!parse_dtype(dtype, &source))
    return "unsupported dtype " + dtype + " (expected F32, F16, BF16, Q8_0, Q4_0, Q4_K or Q6_K)";
  const bool quantized_source = is_quantized(source.type);
  if (quantized_source && slot.vector) return "dtype " + dtype + " is for matrices; a vector (norm or bias) must be F32, F16 or BF16";
  if (quantized_source && slot.cols % block_format(source.type).weights != 0)
    return "a " + dtype + " row holds whole blocks of " + std::to_string(block_format(source.type).weights) +
           " weights, but this matrix has " + std::to_string(slot.cols) + " columns";

  LoadPlan& p = *plan;
  p.source = source;
  p.stored = stored_type(slot, source.type, quantize_to);
  p.count = static_cast<uint64_t>(slot.rows) * static_cast<uint64_t>(slot.cols);
  p.row_bytes = quantized_source ? quant_row_bytes(source.type, slot.cols) : slot.cols * source.element_bytes;
  p.bytes = static_cast<uint64_t>(slot.rows) * p.row_bytes;
  p.stored_row_bytes = is_quantized(p.stored) ? quant_row_bytes(p.stored, slot.cols)
                       : p.stored == WeightType::F32 ? slot.cols * 4 : slot.cols * 2;
  p.k_grouped = is_k_quant(p.stored);
  p.stored_bytes = p.k_grouped ? kgroup_matrix_bytes(p.stored, slot.rows, slot.cols) : slot.rows * p.stored_row_bytes;
  return "";
}

std::string outside_file(uint64_t offset, uint64_t bytes, const std::string& size) {
  return "tensor data [" + std::to_string(offset) + ", +" + std::to_string(bytes) + ") lies outside the file (" + size +
         " bytes)";
}

// "" when [offset, offset + bytes) lies inside a file of `size` bytes (checked
// without overflow), else the error.
std::string check_range(uint64_t offset, uint64_t bytes, uint64_t size) {
  if (offset > size || bytes > size - offset) return outside_file(offset, bytes, std::to_string(size));
  return "";
}

// ---- map ----

// A matrix kept as stored is used where it lies in the file's mapping.
// Row-grouped formats (Q8_0, Q4_0, Q4_K, Q6_K) are repacked for their
// kernels, so they are read instead and their mapping is never touched (each
// weight is once in memory: in its groups). True when the mapping decided the
// load: the slot now uses it (*error empty), or the range lies outside the
// file (*error set). False: read the tensor (no mapping wanted, or the file
// cannot be mapped).
bool map_tensor(Tensor& slot, const LoadPlan& plan, const std::string& path, uint64_t offset, MappedFiles* mapped_files,
                std::string* error) {
  if (mapped_files == nullptr || plan.stored != plan.source.type || is_row_grouped(plan.stored) || slot.vector ||
      offset % kMapAlignment != 0)
    return false;
  std::string map_error;
  std::shared_ptr<const MappedFile> mapping = mapped_files->get(path, &map_error);
  if (!mapping) return false;
  *error = check_range(offset, plan.bytes, mapping->size());
  if (!error->empty()) return true;
  slot.type = plan.stored;
  slot.mapped = mapping->data() + offset;
  slot.mapped_bytes = plan.bytes;
  slot.mapping = std::move(mapping);
  slot.loaded = true;
  return true;
}

// ---- convert ----

// Opens `path` and checks that the tensor's bytes lie inside it. "" or an error.
std::string open_tensor(std::ifstream& file, const std::string& path, uint64_t offset, uint64_t bytes) {
  file.open(path, std::ios::binary);
  if (!file) return "cannot open " + path;
  file.seekg(0, std::ios::end);
  const std::streamoff size = file.tellg();
  if (size < 0) return outside_file(offset, bytes, std::to_string(size));
  return check_range(offset, bytes, static_cast<uint64_t>(size));
}

// The slot's own memory: vectors in their own float32 array; matrices in the
// arena (zeroed, huge pages). Sets *dst to it. "" or an error.
std::string allocate_storage(WeightArena& arena, Tensor& slot, const LoadPlan& plan, uint8_t** dst) {
  try {
    if (slot.vector) {
      slot.data.assign(static_cast<size_t>(plan.count), 0.0f);
      *dst = reinterpret_cast<uint8_t*>(slot.data.data());
    } else {
      *dst = arena.allocate(plan.stored_bytes);
      if (*dst == nullptr) throw std::bad_alloc();
      slot.stored = *dst;
      slot.stored_bytes = plan.stored_bytes;
    }
  } catch (const std::bad_alloc&) {
    return "out of memory allocating " + std::to_string(plan.stored_bytes) + " bytes";
  }
  return "";
}

// Reads `bytes` at `offset` of an open file in chunks, handing each chunk to
// `take(data, size)`; chunks hold whole units of `unit` bytes. "" or an error.
template <typename Take>
std::string read_chunks(std::ifstream& file, const std::string& path, uint64_t offset, uint64_t bytes, size_t unit, Take take) {
  file.seekg(static_cast<std::streamoff>(offset), std::ios::beg);
  const size_t chunk = std::max<size_t>(unit, (size_t{4} << 20) / unit * unit);
  std::vector<char> buffer(static_cast<size_t>(std::min<uint64_t>(chunk, bytes)));
  for (uint64_t done = 0; done < bytes;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, bytes - done));
    file.read(buffer.data(), static_cast<std::streamsize>(n));
    if (!file) return "read error in " + path;
    take(buffer.data(), n);
    done += n;
  }
  return "";
}

// Q4_K / Q6_K: a chunk of whole 16-row groups at a time, packed straight into
// its k-groups, the chunk's groups spread over the model's threads: the GGUF
// rows never exist in memory beyond one chunk.
std::string read_kgroups(std::ifstream& file, const std::string& path, uint64_t offset, const LoadPlan& plan, int64_t cols,
                         ThreadPool& pool, uint8_t* dst) {
  const size_t row_bytes = plan.row_bytes;
  const size_t group_rows_bytes = kKGroupRows * row_bytes;
  const size_t group_bytes = kgroup_matrix_bytes(plan.stored, kKGroupRows, cols);
  size_t first_group = 0;
  return read_chunks(file, path, offset, plan.bytes, group_rows_bytes, [&](const char* p, size_t n) {
    const size_t rows = n / row_bytes, groups = (rows + kKGroupRows - 1) / kKGroupRows;
    const uint8_t* src = reinterpret_cast<const uint8_t*>(p);
    pool.parallel_for(groups, 1, [&](size_t g0, size_t g1, int) {
      const size_t r0 = g0 * kKGroupRows, r1 = std::min(rows, g1 * kKGroupRows);
      pack_kgroups(plan.stored, src + r0 * row_bytes, static_cast<int64_t>(r1 - r0), cols, dst + (first_group + g0) * group_bytes);
    });
    first_group += groups;
  });
}

// Copied as they are: F32, 16-bit matrices, block formats.
std::string read_as_stored(std::ifstream& file, const std::string& path, uint64_t offset, const LoadPlan& plan, uint8_t* dst_bytes) {
  char* dst = reinterpret_cast<char*>(dst_bytes);
  return read_chunks(file, path, offset, plan.bytes, plan.row_bytes, [&](const char* p, size_t n) {
    std::memcpy(dst, p, n);
    dst += n;
  });
}

// Widened (16-bit vectors) or quantized (float matrices), row by row, the rows
// of a chunk spread over the model's threads (idle: one operation at a time
// per model).
std::string read_converted(std::ifstream& file, const std::string& path, uint64_t offset, const LoadPlan& plan, int64_t K,
                           ThreadPool& pool, uint8_t* dst) {
  const size_t row_bytes = plan.row_bytes;
  const WeightType source = plan.source.type, stored = plan.stored;
  const size_t cols = static_cast<size_t>(K);
  std::vector<float> rows(pool.size() * cols);
  size_t first_row = 0;
  return read_chunks(file, path, offset, plan.bytes, row_bytes, [&](const char* p, size_t n) {
    const size_t count_rows = n / row_bytes;
    const size_t grain = std::max<size_t>(1, std::min<size_t>(count_rows, (size_t{1} << 16) / std::max<size_t>(1, cols)));
    pool.parallel_for(count_rows, grain, [&](size_t r0, size_t r1, int thread) {
      float* row = &rows[static_cast<size_t>(thread) * cols];
      for (size_t r = r0; r < r1; ++r) {
        const char* src = p + r * row_bytes;
        for (size_t i = 0; i < cols; ++i) {
          if (source == WeightType::F32) std::memcpy(&row[i], src + i * 4, 4);
          else {
            uint16_t h;
            std::memcpy(&h, src + i * 2, 2);
            row[i] = source == WeightType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
          }
        }
        const size_t at = first_row + r;
        if (is_quantized(stored)) quantize_row(stored, row, dst + at * plan.stored_row_bytes, K);
        else std::memcpy(dst + at * cols * sizeof(float), row, cols * sizeof(float));
      }
    });
    first_row += count_rows;
  });
}

// The file's bytes into `dst`, in the slot's layout (the file is
// little-endian, as are all supported hosts). "" or an error.
std::string read_tensor(std::ifstream& file, const std::string& path, uint64_t offset, const LoadPlan& plan, int64_t cols,
                        ThreadPool& pool, uint8_t* dst) {
  if (plan.k_grouped) return read_kgroups(file, path, offset, plan, cols, pool, dst);
  if (plan.stored == plan.source.type) return read_as_stored(file, path, offset, plan, dst);
  return read_converted(file, path, offset, plan, cols, pool, dst);
}

// ---- repack ----

// 16-bit matmuls read sextets (sextets.h): rewritten in place, a range of
// whole sextets per thread.
void repack_sextets(Tensor& slot, const LoadPlan& plan, ThreadPool& pool, uint8_t* dst) {
  const size_t sextets = static_cast<size_t>(slot.rows) / kSextetRows;
  uint16_t* w = reinterpret_cast<uint16_t*>(dst);
  pool.parallel_for(sextets, std::max<size_t>(1, (size_t{1} << 20) / (kSextetRows * plan.stored_row_bytes)), [&](size_t g0, size_t g1, int) {
    thread_local std::vector<uint16_t> scratch;
    to_sextets(w, slot.cols, g0, g1, scratch);
  });
  slot.sextets = true;
}

// Q8_0 / Q4_0 matmuls read row groups (quant_repack.h): rewritten in place, a
// range of whole groups per thread; the rows % 8 rows after the last group
// packed once here (slot.group_tail) instead of per matmul.
void repack_row_groups(Tensor& slot, const LoadPlan& plan, ThreadPool& pool, uint8_t* dst) {
  const size_t group_bytes = kGroupRows * plan.stored_row_bytes, groups = static_cast<size_t>(slot.rows) / kGroupRows;
  pool.parallel_for(groups, std::max<size_t>(1, (size_t{1} << 20) / group_bytes), [&](size_t g0, size_t g1, int) {
    repack_rows(slot.type, dst + g0 * group_bytes, static_cast<int64_t>(g1 - g0) * kGroupRows, slot.cols);
  });
  const int tail_rows = static_cast<int>(slot.rows % kGroupRows);
  if (tail_rows > 0) {
    const uint8_t* rows[kGroupRows];
    for (int r = 0; r < tail_rows; ++r) rows[r] = dst + (groups * kGroupRows + r) * plan.stored_row_bytes;
    slot.group_tail.assign(group_bytes, 0);
    pack_group(slot.type, rows, tail_rows, slot.cols, slot.group_tail.data());
  }
}

// The layout the slot's kernels read, rewritten in place after the read.
void repack(Tensor& slot, const LoadPlan& plan, ThreadPool& pool, uint8_t* dst) {
  if ((slot.type == WeightType::F16 || slot.type == WeightType::BF16) && !slot.vector && sextets_fit(slot.cols) &&
      sextets_wanted())
    repack_sextets(slot, plan, pool, dst);
  if (is_q8_grouped(slot.type)) repack_row_groups(slot, plan, pool, dst);
}

}  // namespace

std::string load_weight(WeightArena& arena, Tensor& slot, const std::string& path, uint64_t offset, const std::string& dtype,
                        const std::vector<int64_t>& shape, WeightType quantize_to, ThreadPool& pool,
                        MappedFiles* mapped_files) {
  LoadPlan plan;
  std::string error = check_tensor(slot, dtype, shape, quantize_to, &plan);
  if (!error.empty()) return error;
  slot.loaded = false;  // until every byte is in
  slot.clear_storage(arena);
  if (map_tensor(slot, plan, path, offset, mapped_files, &error)) return error;

  std::ifstream file;
  error = open_tensor(file, path, offset, plan.bytes);
  if (!error.empty()) return error;
  uint8_t* dst = nullptr;
  error = allocate_storage(arena, slot, plan, &dst);
  if (!error.empty()) return error;
  slot.type = plan.stored;
  error = read_tensor(file, path, offset, plan, slot.cols, pool, dst);
  if (!error.empty()) {
    slot.clear_storage(arena);
    return error;
  }
  repack(slot, plan, pool, dst);
  slot.loaded = true;
  return "";
}

}  // namespace weft
