#pragma once
// The one argument splitter of latchd: inline requests (request_parser) and config-file lines
// (config_parser) are split alike, as Redis splits both with sdssplitargs().
#include <string>
#include <string_view>
#include <vector>

namespace latch::protocol {

// Splits a line into arguments the way Redis's sdssplitargs does:
// - isspace() characters (space, \t, \n, \v, \f, \r) are skipped between arguments, but
//   only space, \t, \n and \r end an unquoted argument (\v and \f are part of it);
// - "double quotes" accept \n \r \t \b \a \\ \" and \xHH escapes; 'single quotes'
//   accept \'; a quote may open in the middle of an argument; a closing quote must be
//   followed by whitespace or the end;
// - a NUL byte ends the line (sdssplitargs works on a C string).
// Returns false (and clears *out) on unbalanced quotes. Strings already in *out are reused.
bool SplitArgs(std::string_view line, std::vector<std::string>* out);

// Appends `arg` in double quotes the way Redis's sdscatrepr writes it (\\ \" \n \r \t \a \b,
// \xHH for other unprintable bytes): what MONITOR shows and CONFIG REWRITE writes. SplitArgs
// reads it back unchanged.
void AppendQuotedArg(std::string* out, std::string_view arg);

}  // namespace latch::protocol
