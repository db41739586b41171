#include "checkpoint/torch_pickle.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <unordered_map>

#include "common/error.h"

namespace bt::checkpoint {
namespace {

// Plain pickle values. All live in the Unpickler's arena and refer to each other by raw pointer, so memo
// aliasing (even a list appended to itself) can neither leak nor recurse on destruction. Kept small (one byte of
// pickle can make one Obj): a tensor's record lives out of line.
struct Obj {
  enum Kind : uint8_t { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor } kind = None;
  checkpoint::DType dtype = checkpoint::DType::F32;  // Storage, Tensor
  uint32_t depth = 1;                // containers: 1 + their deepest item's depth (an upper bound under aliasing)
  int64_t i = 0;
  std::string s;                     // Str; Global: "module.name"; Storage: key
  std::vector<Obj*> items;           // Tuple, List; Dict: key, value, key, value, ...
  std::unique_ptr<TensorRecord> rec; // Tensor
};

bool storage_dtype(const std::string& global, checkpoint::DType* d) {
  static const std::pair<const char*, checkpoint::DType> kTypes[] = {
      {"torch.FloatStorage", checkpoint::DType::F32},   {"torch.HalfStorage", checkpoint::DType::F16},
      {"torch.BFloat16Storage", checkpoint::DType::BF16}, {"torch.DoubleStorage", checkpoint::DType::F64},
      {"torch.LongStorage", checkpoint::DType::I64},    {"torch.IntStorage", checkpoint::DType::I32},
      {"torch.ShortStorage", checkpoint::DType::I16},   {"torch.CharStorage", checkpoint::DType::I8},
      {"torch.ByteStorage", checkpoint::DType::U8},     {"torch.BoolStorage", checkpoint::DType::BOOL}};
  for (const auto& [n, t] : kTypes)
    if (global == n) {
      *d = t;
      return true;
    }
  return false;
}

bool allowed_global(const std::string& g) {
  checkpoint::DType d;
  return g == "collections.OrderedDict" || g == "torch._utils._rebuild_tensor_v2" ||
         g == "torch._utils._rebuild_parameter" || storage_dtype(g, &d);
}

// Limits that keep a small pickle from costing gigabytes: a state dict's containers nest 4 deep, and unpickling
// one takes about 15 bytes of memory per pickle byte (the minimum covers small pickles, whose ratio is higher).
constexpr uint32_t kMaxPickleDepth = 100;
constexpr uint64_t kMemoryPerByte = 32;
constexpr uint64_t kMinMemory = uint64_t(64) << 20;

class Unpickler {
 public:
  Unpickler(const uint8_t* p, size_t n, std::string_view what)
      : p_(p), n_(n), what_(what), budget_(std::max<uint64_t>(kMinMemory, uint64_t(n) * kMemoryPerByte)) {}
  Obj* run();

 private:
  template <class... A>
  [[noreturn]] void bad(const A&... a) const {
    bt::fail(what_, ": ", a..., " (pickle offset ", pos_, ")");
  }
  const uint8_t* take(size_t k) {
    if (k > n_ - pos_) bad("truncated pickle");
    const uint8_t* r = p_ + pos_;
    pos_ += k;
    return r;
  }
  uint64_t le(size_t k) {
    const uint8_t* b = take(k);
    uint64_t v = 0;
    for (size_t j = 0; j < k; ++j) v |= static_cast<uint64_t>(b[j]) << (8 * j);
    return v;
  }
  std::string line() {
    size_t start = pos_;
    while (pos_ < n_ && p_[pos_] != '\n') ++pos_;
    if (pos_ >= n_) bad("truncated pickle");
    return std::string(reinterpret_cast<const char*>(p_ + start), pos_++ - start);
  }
  // Every allocation is charged here before it is made (approximately: payload plus bookkeeping).
  void charge(uint64_t bytes) {
    used_ += bytes;
    if (used_ > budget_)
      bad("unpickling needs more than ", budget_ >> 20, " MiB, more than a ", n_, "-byte pickle can justify (",
          kMemoryPerByte, " bytes per pickle byte; a state dict needs far less): the pickle is corrupt or hostile");
  }
  Obj* make(Obj::Kind k) {
    charge(sizeof(Obj));
    Obj& o = arena_.emplace_back();
    o.kind = k;
    return &o;
  }
  // A container now holding `items`: its depth bounded by kMaxPickleDepth (a state dict nests 4 deep).
  void add_items(Obj* c, Obj* const* items, size_t count) {
    charge(16 + 8 * count);
    for (size_t j = 0; j < count; ++j) {
      c->items.push_back(items[j]);
      c->depth = std::max(c->depth, items[j]->depth + 1);
    }
    if (c->depth > kMaxPickleDepth)
      bad("containers nest deeper than ", kMaxPickleDepth, " levels (a state dict nests 4): the pickle is corrupt or hostile");
  }
  Obj* pop() {
    if (stack_.size() <= floor()) bad("pickle stack underflow");
    Obj* o = stack_.back();
    stack_.pop_back();
    return o;
  }
  Obj* top() {
    if (stack_.size() <= floor()) bad("pickle stack underflow");
    return stack_.back();
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<Obj*> pop_to_mark() {
    if (marks_.empty()) bad("pickle has no MARK");
    std::vector<Obj*> v(stack_.begin() + static_cast<ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return v;
  }
  Obj* string_obj(size_t len) {
    const uint8_t* b = take(len);
    Obj* o = make(Obj::Str);
    charge(len);
    o->s.assign(reinterpret_cast<const char*>(b), len);
    return o;
  }
  Obj* global(std::string mod, std::string name) {
    std::string g = mod + "." + name;
    if (!allowed_global(g))
      bad("the pickle names the global '", g, "', which a state dict never holds (refused; nothing was executed)");
    Obj* o = make(Obj::Global);
    o->s = g;
    return o;
  }
  void set_items(Obj* d, const std::vector<Obj*>& kv) {
    if (d->kind != Obj::Dict) bad("SETITEMS on a non-dict");
    if (kv.size() % 2) bad("SETITEMS with an odd number of values");
    add_items(d, kv.data(), kv.size());
  }
  void memo_put(uint64_t idx) {
    Obj* o = top();
    auto [it, added] = memo_.try_emplace(idx, o);
    if (added) charge(48);  // an unordered_map node and its share of the buckets
    else it->second = o;
  }
  Obj* memo_get(uint64_t idx) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) bad("pickle reads memo entry ", idx, " before writing it");
    return it->second;
  }
  Obj* persistent_load(Obj* pid);
  Obj* reduce(Obj* fn, Obj* args);
  Obj* rebuild_tensor(const std::vector<Obj*>& a);
  std::vector<int64_t> int_tuple(Obj* o, const char* field);
  bool step(uint8_t op);

  const uint8_t* p_;
  size_t n_, pos_ = 0;
  std::string_view what_;
  std::deque<Obj> arena_;  // stable addresses, no allocation per object
  std::vector<Obj*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Obj*> memo_;
  uint64_t used_ = 0;
  const uint64_t budget_;
};

std::vector<int64_t> Unpickler::int_tuple(Obj* o, const char* field) {
  if (o->kind != Obj::Tuple && o->kind != Obj::List) bad("tensor ", field, " is not a tuple");
  if (o->items.size() > 64) bad("tensor ", field, " has ", o->items.size(), " dimensions");
  std::vector<int64_t> v;
  for (Obj* x : o->items) {
    if (x->kind != Obj::Int || x->i < 0) bad("tensor ", field, " holds a value that is not a size >= 0");
    v.push_back(x->i);
  }
  return v;
}

// torch.save writes ('storage', <storage type>, key, location, numel).
Obj* Unpickler::persistent_load(Obj* pid) {
  if (pid->kind != Obj::Tuple || pid->items.size() != 5 || pid->items[0]->kind != Obj::Str ||
      pid->items[0]->s != "storage" || pid->items[1]->kind != Obj::Global || pid->items[2]->kind != Obj::Str)
    bad("unsupported persistent id (expected ('storage', type, key, location, size))");
  Obj* o = make(Obj::Storage);
  if (!storage_dtype(pid->items[1]->s, &o->dtype)) bad("persistent id names '", pid->items[1]->s, "', not a storage type");
  o->s = pid->items[2]->s;
  return o;
}

Obj* Unpickler::rebuild_tensor(const std::vector<Obj*>& a) {
  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  if (a.size() < 4 || a[0]->kind != Obj::Storage || a[1]->kind != Obj::Int || a[1]->i < 0)
    bad("malformed _rebuild_tensor_v2 arguments");
  Obj* t = make(Obj::Tensor);
  charge(sizeof(TensorRecord) + a[0]->s.size() + 16 * a[2]->items.size());
  t->rec = std::make_unique<TensorRecord>();
  TensorRecord& r = *t->rec;
  r.dtype = a[0]->dtype;
  r.storage_key = a[0]->s;
  r.storage_offset = a[1]->i;
  r.shape = int_tuple(a[2], "size");
  r.strides = int_tuple(a[3], "stride");
  if (r.shape.size() != r.strides.size()) bad("tensor size and stride differ in length");
  return t;
}

Obj* Unpickler::reduce(Obj* fn, Obj* args) {
  if (fn->kind != Obj::Global || args->kind != Obj::Tuple) bad("REDUCE of a non-global");
  if (fn->s == "collections.OrderedDict") return make(Obj::Dict);
  if (fn->s == "torch._utils._rebuild_tensor_v2") return rebuild_tensor(args->items);
  if (fn->s == "torch._utils._rebuild_parameter") {  // (tensor, requires_grad, backward_hooks)
    if (args->items.empty() || args->items[0]->kind != Obj::Tensor) bad("malformed _rebuild_parameter arguments");
    return args->items[0];
  }
  bad("'", fn->s, "' cannot be called");
}

// One opcode; false at STOP.
bool Unpickler::step(uint8_t op) {
  switch (op) {
    case 0x80: take(1); break;          // PROTO
    case 0x95: take(8); break;          // FRAME: framing only
    case '(': marks_.push_back(stack_.size()); break;
    case '}': stack_.push_back(make(Obj::Dict)); break;
    case ']': stack_.push_back(make(Obj::List)); break;
    case ')': stack_.push_back(make(Obj::Tuple)); break;
    case 'N': stack_.push_back(make(Obj::None)); break;
    case 0x88: case 0x89: stack_.push_back(make(Obj::Bool)); stack_.back()->i = op == 0x88; break;
    case 'K': stack_.push_back(make(Obj::Int)); stack_.back()->i = static_cast<int64_t>(le(1)); break;
    case 'M': stack_.push_back(make(Obj::Int)); stack_.back()->i = static_cast<int64_t>(le(2)); break;
    case 'J': stack_.push_back(make(Obj::Int)); stack_.back()->i = static_cast<int32_t>(le(4)); break;
    case 0x8a: {  // LONG1: little-endian two's complement of n bytes
      size_t k = le(1);
      if (k > 8) bad("integer wider than 64 bits");
      uint64_t v = k ? le(k) : 0;
      if (k && k < 8 && (v >> (8 * k - 1)) & 1) v |= ~uint64_t{0} << (8 * k);
      stack_.push_back(make(Obj::Int));
      stack_.back()->i = static_cast<int64_t>(v);
      break;
    }
    case 'G': take(8); stack_.push_back(make(Obj::Float)); break;  // values of floats are never needed
    case 'X': stack_.push_back(string_obj(le(4))); break;
    case 0x8c: stack_.push_back(string_obj(le(1))); break;
    case 0x8d: stack_.push_back(string_obj(le(8))); break;
    case 'B': stack_.push_back(string_obj(le(4))); break;  // BINBYTES (as a string: never interpreted)
    case 'C': stack_.push_back(string_obj(le(1))); break;
    case 't': {
      Obj* t = make(Obj::Tuple);
      const std::vector<Obj*> items = pop_to_mark();
      add_items(t, items.data(), items.size());
      stack_.push_back(t);
      break;
    }
    case 0x85: case 0x86: case 0x87: {
      Obj* items[3];
      const size_t k = op - 0x84;
      for (size_t j = k; j-- > 0;) items[j] = pop();
      Obj* t = make(Obj::Tuple);
      add_items(t, items, k);
      stack_.push_back(t);
      break;
    }
    case 'c': { std::string m = line(); stack_.push_back(global(m, line())); break; }
    case 0x93: {
      Obj* name = pop();
      Obj* mod = pop();
      if (name->kind != Obj::Str || mod->kind != Obj::Str) bad("STACK_GLOBAL of non-strings");
      stack_.push_back(global(mod->s, name->s));
      break;
    }
    case 'R': { Obj* args = pop(); Obj* fn = pop(); stack_.push_back(reduce(fn, args)); break; }
    case 'b': {  // BUILD: only dicts get state (OrderedDict's _metadata), which a state dict does not need
      pop();
      if (top()->kind != Obj::Dict) bad("BUILD on a ", top()->kind == Obj::Tensor ? "tensor" : "non-dict");
      break;
    }
    case 's': { Obj* v = pop(); Obj* k = pop(); set_items(top(), {k, v}); break; }
    case 'u': { auto kv = pop_to_mark(); set_items(top(), kv); break; }
    case 'a': case 'e': {
      auto vs = op == 'a' ? std::vector<Obj*>{pop()} : pop_to_mark();
      Obj* l = top();
      if (l->kind != Obj::List) bad("APPEND to a non-list");
      add_items(l, vs.data(), vs.size());
      break;
    }
    case 'q': memo_put(le(1)); break;
    case 'r': memo_put(le(4)); break;
    case 0x94: memo_put(memo_.size()); break;
    case 'h': stack_.push_back(memo_get(le(1))); break;
    case 'j': stack_.push_back(memo_get(le(4))); break;
    case 'Q': stack_.push_back(persistent_load(pop())); break;
    case '.': return false;
    default: --pos_; bad("unsupported pickle opcode 0x", "0123456789abcdef"[op >> 4], "0123456789abcdef"[op & 15]);
  }
  return true;
}

Obj* Unpickler::run() {
  while (step(*take(1))) {
  }
  if (stack_.size() != 1 || !marks_.empty()) bad("pickle does not end with exactly one value");
  return stack_.back();
}

}  // namespace

std::vector<TensorRecord> unpickle_state_dict(const uint8_t* data, size_t size, std::string_view what) {
  Unpickler u(data, size, what);
  Obj* root = u.run();
  if (root->kind != Obj::Dict) bt::fail(what, ": the pickle is not a state dict (a dict of tensors)");
  std::vector<TensorRecord> out;
  for (size_t j = 0; j + 1 < root->items.size(); j += 2) {
    const Obj* k = root->items[j];
    const Obj* v = root->items[j + 1];
    if (k->kind != Obj::Str) bt::fail(what, ": a state dict key is not a string");
    if (v->kind != Obj::Tensor) bt::fail(what, ": state dict entry '", k->s, "' is not a tensor");
    out.push_back(*v->rec);
    out.back().name = k->s;
  }
  return out;
}

uint64_t required_storage_bytes(const TensorRecord& r, std::string_view what) {
  constexpr uint64_t kMax = uint64_t{1} << 50;  // 1 PiB: beyond any real storage, far from overflow
  uint64_t last = static_cast<uint64_t>(r.storage_offset);
  if (last >= kMax) bt::fail(what, ": tensor '", r.name, "' has an absurd storage offset");
  for (size_t d = 0; d < r.shape.size(); ++d) {
    if (r.shape[d] == 0) return 0;
    uint64_t span = static_cast<uint64_t>(r.shape[d] - 1), stride = static_cast<uint64_t>(r.strides[d]);
    if (span >= kMax || stride >= kMax || (stride && span > kMax / stride)) last = kMax;
    else last += span * stride;
    if (last >= kMax) bt::fail(what, ": tensor '", r.name, "' has an absurd shape or stride");
  }
  return (last + 1) * checkpoint::dtype_size(r.dtype);
}

}  // namespace bt::checkpoint
