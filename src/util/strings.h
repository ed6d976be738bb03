// Small string helpers shared by every layer: splitting, trimming, number
// parsing that reports failure instead of throwing, shell quoting for the
// command lines we print, and "did you mean" suggestions for typos.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace primus {

std::vector<std::string> Split(std::string_view text, char separator);
std::string Join(const std::vector<std::string>& parts, std::string_view separator);
// Numbers (ranks, pids) in decimal: JoinNumbers({0, 2, 5}, ", ") is "0, 2, 5".
std::string JoinNumbers(const std::vector<int>& numbers, std::string_view separator);
std::string_view Trim(std::string_view text);
std::string ToLower(std::string_view text);
std::string ToUpper(std::string_view text);
std::string ReplaceAll(std::string text, std::string_view from, std::string_view to);

std::optional<int64_t> ParseInt(std::string_view text);
std::optional<double> ParseDouble(std::string_view text);
// true/false, yes/no, on/off, 1/0 (case-insensitive).
std::optional<bool> ParseBool(std::string_view text);

// Edit distance counting a swap of neighbouring characters as one edit.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word`, when it is close enough to be a likely typo
// (distance at most a third of the word's length, at least 1; or a prefix).
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" when nothing is close.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// Quotes one argument for bash only when it needs it: a plain word as it
// is, anything else in single quotes. An argument holding a control
// character (line break, CR, ESC, ...), a byte that is not UTF-8, or a
// Unicode line separator or direction override is written as bash's
// $'...' with every such byte as \n, \r, \t or \xHH: the result is exact
// (bash reads back the same bytes in any locale), stays on one line, and
// cannot move the cursor or recolour a terminal it is printed on. Used for
// the command lines we print and the batch scripts we write.
std::string ShellQuote(std::string_view arg);
std::string ShellJoin(const std::vector<std::string>& argv);

// Whether `text` holds something ShellQuote escapes (see above).
bool HasControlCharacter(std::string_view text);
// `text` with what ShellQuote escapes written as \n, \r, \t or \xHH, for
// comments and log lines; `keep_line_breaks` leaves \n and \t as they are
// (a multi-line message).
std::string EscapeControlCharacters(std::string_view text, bool keep_line_breaks = false);
// Whether every byte of `text` belongs to a well-formed UTF-8 sequence.
bool IsValidUtf8(std::string_view text);

// A name that is safe as one component of a path: 1 to 128 letters, digits,
// '-', '_' and '.', not "." or ".." (run ids, experiment names).
bool IsSafePathComponent(std::string_view text);

}  // namespace primus
