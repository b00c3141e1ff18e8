#include "commands/command_args.h"

#include <cctype>
#include <string>
#include <vector>

namespace latch {
namespace {

struct Arg {
  std::string name, type, token;
  bool optional = false, multiple = false;
  std::vector<Arg> children;  // oneof / block
};

class NotationParser {
 public:
  explicit NotationParser(std::string_view s) : s_(s) {}

  bool ParseList(std::vector<Arg>* out, char end) {
    while (true) {
      SkipSpace();
      if (pos_ == s_.size()) return end == '\0';
      if (s_[pos_] == end) return true;
      Arg a;
      if (!ParseOne(&a)) return false;
      out->push_back(std::move(a));
    }
  }

 private:
  void SkipSpace() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  std::string Word() {
    std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '-' || s_[pos_] == '_' || s_[pos_] == '.')) {
      ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  // After "name:": a plain type or "(alt|alt|...)".
  bool ParseType(Arg* a) {
    if (!Eat('(')) {
      a->type = Word();
      return true;
    }
    a->type = "oneof";
    do {
      Arg alt;
      if (!ParseOne(&alt)) return false;
      a->children.push_back(std::move(alt));
    } while (Eat('|'));
    return Eat(')');
  }

  bool ParseOne(Arg* a) {
    if (Eat('[')) {
      if (!ParseOne(a)) return false;
      SkipSpace();
      if (!Eat(']')) return false;
      a->optional = true;
    } else if (Eat('{')) {
      a->name = Word();
      a->type = "block";
      if (a->name.empty() || !Eat(':')) return false;
      if (!ParseList(&a->children, '}') || !Eat('}')) return false;
    } else {
      std::string first = Word();
      if (first.empty()) return false;
      if (Eat('=')) {  // TOKEN=name:type
        a->token = first;
        a->name = Word();
        if (!Eat(':') || !ParseType(a)) return false;
      } else if (Eat(':')) {
        a->name = first;
        if (!ParseType(a)) return false;
      } else {  // pure token
        a->token = first;
        a->name = Lower(first);
        a->type = "pure-token";
      }
      if (a->type.empty() || a->name.empty()) return false;
    }
    if (Eat('*')) a->multiple = true;
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

void Write(protocol::ReplyWriter& out, const Arg& a) {
  std::size_t fields = 2 + (a.token.empty() ? 0 : 1) + (a.optional || a.multiple ? 1 : 0) +
                       (a.children.empty() ? 0 : 1);
  out.MapHeader(fields);
  out.Bulk("name");
  out.Bulk(a.name);
  out.Bulk("type");
  out.Bulk(a.type);
  if (!a.token.empty()) {
    out.Bulk("token");
    out.Bulk(a.token);
  }
  if (a.optional || a.multiple) {
    out.Bulk("flags");
    out.SetHeader((a.optional ? 1 : 0) + (a.multiple ? 1 : 0));
    if (a.optional) out.Simple("optional");
    if (a.multiple) out.Simple("multiple");
  }
  if (!a.children.empty()) {
    out.Bulk("arguments");
    out.ArrayHeader(a.children.size());
    for (const auto& c : a.children) Write(out, c);
  }
}

}  // namespace

bool WriteCommandArguments(protocol::ReplyWriter& out, std::string_view notation) {
  std::vector<Arg> args;
  NotationParser p(notation);
  if (!p.ParseList(&args, '\0')) return false;
  out.ArrayHeader(args.size());
  for (const auto& a : args) Write(out, a);
  return true;
}

}  // namespace latch
