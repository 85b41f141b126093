#include "linear_pattern.h"

#include "etwh/pattern.h"

#include <string>

namespace etwh::detail {

namespace {

using Bytes = std::bitset<256>;

struct Node {
  enum Kind { kSet, kBegin, kEnd, kEmpty, kConcat, kAlternate, kStar, kPlus, kOptional } kind;
  Bytes set;
  std::vector<Node> kids;
};

Bytes range(unsigned char low, unsigned char high) {
  Bytes b;
  for (unsigned c = low; c <= high; ++c) b.set(c);
  return b;
}

Bytes word_bytes() { return range('0', '9') | range('A', 'Z') | range('a', 'z') | range('_', '_'); }
Bytes space_bytes() { return range('\t', '\n') | range('\f', '\r') | range(' ', ' '); }

// The one byte of a set that holds exactly one.
unsigned char only_byte(const Bytes& b) {
  unsigned c = 0;
  while (!b.test(c)) ++c;
  return static_cast<unsigned char>(c);
}

bool is_punctuation(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x80 && u > 0x20 && u != 0x7f && !word_bytes().test(u);
}

// Recursive descent over the subset, into a tree the compiler lays out as instructions.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Node parse() {
    Node node = alternation();
    if (pos_ < text_.size()) fail("unexpected )");
    return node;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw PatternError(why + " at byte " + std::to_string(pos_ + 1));
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  Node alternation() {
    Node first = concatenation();
    if (!at('|')) return first;
    Node alt{Node::kAlternate, {}, {}};
    alt.kids.push_back(std::move(first));
    while (at('|')) {
      ++pos_;
      alt.kids.push_back(concatenation());
    }
    return alt;
  }

  Node concatenation() {
    Node seq{Node::kConcat, {}, {}};
    while (pos_ < text_.size() && !at('|') && !at(')')) seq.kids.push_back(repetition());
    if (seq.kids.empty()) return {Node::kEmpty, {}, {}};
    return seq;
  }

  Node repetition() {
    Node node = atom();
    if (at('{')) fail("counted repetition {n,m} is not supported by this build's matcher");
    if (!at('*') && !at('+') && !at('?')) return node;
    const char op = text_[pos_++];
    const Node::Kind kind = op == '*' ? Node::kStar : op == '+' ? Node::kPlus : Node::kOptional;
    node = Node{kind, {}, {std::move(node)}};
    if (at('?')) ++pos_;  // the lazy form: the same set of matches, for a search
    if (at('*') || at('+') || at('?') || at('{')) fail("bad repetition operator");
    return node;
  }

  Node atom() {
    const char c = text_[pos_];
    if (c == '*' || c == '+' || c == '?') fail("missing argument to repetition operator");
    ++pos_;
    switch (c) {
      case '(': return group();
      case '[': return {Node::kSet, bracket(), {}};
      case '.': return {Node::kSet, ~range('\n', '\n'), {}};
      case '^': return {Node::kBegin, {}, {}};
      case '$': return {Node::kEnd, {}, {}};
      case '\\': return {Node::kSet, escape(), {}};
      default: return {Node::kSet, range(c, c), {}};
    }
  }

  Node group() {
    if (at('?')) {
      if (pos_ + 1 < text_.size() && text_[pos_ + 1] == ':') {
        pos_ += 2;
      } else {
        fail("flags and named groups (?...) are not supported by this build's matcher");
      }
    }
    if (++depth_ > 200) fail("groups nested deeper than 200");
    Node inner = alternation();
    --depth_;
    if (!at(')')) fail("missing )");
    ++pos_;
    return inner;
  }

  Bytes escape() {
    if (pos_ >= text_.size()) fail("trailing \\");
    const char c = text_[pos_++];
    switch (c) {
      case 'd': return range('0', '9');
      case 'D': return ~range('0', '9');
      case 'w': return word_bytes();
      case 'W': return ~word_bytes();
      case 's': return space_bytes();
      case 'S': return ~space_bytes();
      case 'n': return range('\n', '\n');
      case 't': return range('\t', '\t');
      case 'r': return range('\r', '\r');
      case 'f': return range('\f', '\f');
      case 'v': return range('\v', '\v');
      default:
        if (is_punctuation(c)) return range(c, c);
        --pos_;
        fail(std::string("the escape \\") + c + " is not supported by this build's matcher");
    }
  }

  Bytes bracket() {
    const bool negated = at('^');
    if (negated) ++pos_;
    Bytes set;
    bool first = true;
    while (pos_ < text_.size() && (first || !at(']'))) {
      first = false;
      unsigned char low = static_cast<unsigned char>(text_[pos_]);
      if (low == '\\') {
        ++pos_;
        const Bytes escaped = escape();
        if (escaped.count() != 1) {
          set |= escaped;
          continue;
        }
        low = only_byte(escaped);
      } else {
        ++pos_;
      }
      unsigned char high = low;
      if (at('-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        high = static_cast<unsigned char>(text_[pos_++]);
        if (high == '\\') {
          const Bytes escaped = escape();
          if (escaped.count() != 1) fail("bad character class range");
          high = only_byte(escaped);
        }
        if (high < low) fail("bad character class range");
      }
      set |= range(low, high);
    }
    if (!at(']')) fail("missing ]");
    ++pos_;
    return negated ? ~set : set;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

// Lays the tree out as instructions (Thompson's construction).
class LinearCompiler {
 public:
  using Instruction = LinearPattern::Instruction;
  using Op = LinearPattern::Op;

  explicit LinearCompiler(std::vector<Instruction>& program) : program_(program) {}

  void emit(const Node& node) {
    switch (node.kind) {
      case Node::kSet: add({Op::kByte, node.set}); break;
      case Node::kBegin: add({Op::kBegin, {}}); break;
      case Node::kEnd: add({Op::kEnd, {}}); break;
      case Node::kEmpty: break;
      case Node::kConcat:
        for (const Node& kid : node.kids) emit(kid);
        break;
      case Node::kAlternate: alternate(node.kids, 0); break;
      case Node::kStar: {  // L: split body, out; body; jump L
        const int split = add({Op::kSplit, {}});
        emit(node.kids[0]);
        add({Op::kJump, {}, split});
        patch(split, split + 1, here());
        break;
      }
      case Node::kPlus: {  // L: body; split L, out
        const int start = here();
        emit(node.kids[0]);
        const int split = add({Op::kSplit, {}});
        patch(split, start, here());
        break;
      }
      case Node::kOptional: {  // split body, out; body
        const int split = add({Op::kSplit, {}});
        emit(node.kids[0]);
        patch(split, split + 1, here());
        break;
      }
    }
  }

 private:
  void alternate(const std::vector<Node>& kids, std::size_t i) {
    if (i + 1 == kids.size()) {
      emit(kids[i]);
      return;
    }
    const int split = add({Op::kSplit, {}});
    emit(kids[i]);
    const int jump = add({Op::kJump, {}});
    patch(split, split + 1, here());
    alternate(kids, i + 1);
    program_[static_cast<std::size_t>(jump)].x = here();
  }
  int here() const { return static_cast<int>(program_.size()); }
  int add(Instruction instruction) {
    program_.push_back(instruction);
    return here() - 1;
  }
  void patch(int split, int x, int y) {
    program_[static_cast<std::size_t>(split)].x = x;
    program_[static_cast<std::size_t>(split)].y = y;
  }

  std::vector<Instruction>& program_;
};

LinearPattern::LinearPattern(std::string_view text) {
  if (text.size() > kMaxLength) {
    throw PatternError("longer than " + std::to_string(kMaxLength) +
                       " bytes, the limit of this build's matcher");
  }
  const Node tree = Parser(text).parse();
  LinearCompiler(program_).emit(tree);
  program_.push_back({Op::kMatch, {}});
}

bool LinearPattern::found_in(std::string_view text) const {
  // Each step keeps the set of instructions alive at one position: a thread per instruction
  // at most, so a step costs the program's length at most.
  const std::size_t size = program_.size();
  std::vector<int> current, next, stack;
  std::vector<std::size_t> seen(size, 0);  // the step (position + 1) an instruction was added in
  bool matched = false;
  auto add = [&](std::vector<int>& list, int start, std::size_t pos) {
    stack.assign(1, start);
    while (!stack.empty()) {
      const auto pc = static_cast<std::size_t>(stack.back());
      stack.pop_back();
      if (seen[pc] == pos + 1) continue;
      seen[pc] = pos + 1;
      const Instruction& in = program_[pc];
      switch (in.op) {
        case Op::kByte: list.push_back(static_cast<int>(pc)); break;
        case Op::kMatch: matched = true; break;
        case Op::kJump: stack.push_back(in.x); break;
        case Op::kSplit:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Op::kBegin:
          if (pos == 0) stack.push_back(static_cast<int>(pc) + 1);
          break;
        case Op::kEnd:
          if (pos == text.size()) stack.push_back(static_cast<int>(pc) + 1);
          break;
      }
    }
  };
  for (std::size_t pos = 0;; ++pos) {
    add(current, 0, pos);  // a search: a match may start at any position
    if (matched) return true;
    if (pos == text.size()) return false;
    const auto byte = static_cast<unsigned char>(text[pos]);
    next.clear();
    for (int pc : current) {
      if (program_[static_cast<std::size_t>(pc)].bytes.test(byte)) add(next, pc + 1, pos + 1);
    }
    if (matched) return true;
    std::swap(current, next);
  }
}

}  // namespace etwh::detail
