// The checks of the crash test (crash_test.cc) that need no engine and no
// process: given what a killed worker attempted and what the engine
// recovered, is the recovered state one the engine may produce? Pure
// functions over plain data, so that they can be tested on hand-built
// histories (a checker that accepts everything would pass every crash run).
//
// Header-only, like crash_format.h: tools/ is not part of the library.

#ifndef KVS_TOOLS_CRASH_CHECK_H_
#define KVS_TOOLS_CRASH_CHECK_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "tools/crash_format.h"

namespace kvs::crash {

// What a key holds: absent, or the value put by operation `seq`.
struct KeyState {
  bool present = false;
  uint64_t seq = 0;

  bool operator==(const KeyState& other) const {
    return present == other.present && (!present || seq == other.seq);
  }
};

// One operation the worker attempted, as its journal tells.
struct Attempt {
  uint32_t key = 0;
  uint64_t seq = 0;
  bool is_delete = false;
  bool guaranteed = false;  // the engine promised it durable before the kill
  uint64_t micros = 0;      // when it was attempted (CLOCK_MONOTONIC)

  KeyState Outcome() const {
    return is_delete ? KeyState{} : KeyState{true, seq};
  }
};

// --- Per key -----------------------------------------------------------------
//
// What the check accepts for one key: the outcome of the last operation on
// it the engine guaranteed in this cycle (or, if none, the state the
// previous check saw), or the outcome of any later operation the worker
// attempted in this cycle (it may have reached the log before the kill).
// This alone cannot see a state mixing old and new operations across keys
// (the prefix check below does), but it names a lost guaranteed write, a
// resurrected old value or a value nobody wrote key by key.

struct Expectation {
  bool absent_allowed = false;
  std::vector<uint64_t> put_seqs;
  std::string description;

  bool Accepts(const KeyState& state) const {
    return state.present ? std::find(put_seqs.begin(), put_seqs.end(),
                                     state.seq) != put_seqs.end()
                         : absent_allowed;
  }
};

// `attempts`: the operations of this cycle on one key, in seq order.
inline Expectation ExpectationFor(const KeyState& settled,
                                  const std::vector<Attempt>& attempts) {
  Expectation expectation;
  std::ostringstream description;
  // The last guaranteed operation wins over everything before it.
  size_t first_possible = 0;
  for (size_t i = attempts.size(); i-- > 0;) {
    if (attempts[i].guaranteed) {
      first_possible = i;
      break;
    }
  }
  const bool any_guaranteed =
      !attempts.empty() && attempts[first_possible].guaranteed;
  if (any_guaranteed) {
    const Attempt& base = attempts[first_possible];
    if (base.is_delete) {
      description << "absent (deleted by guaranteed seq " << base.seq << ")";
    } else {
      description << "the value of guaranteed put seq " << base.seq;
    }
  } else {
    if (settled.present) {
      expectation.put_seqs.push_back(settled.seq);
      description << "the value of seq " << settled.seq
                  << " seen by the previous check";
    } else {
      expectation.absent_allowed = true;
      description << "absent, as at the previous check";
    }
  }
  const size_t later = any_guaranteed ? first_possible + 1 : 0;
  for (size_t i = any_guaranteed ? first_possible : 0; i < attempts.size();
       ++i) {
    if (attempts[i].is_delete) {
      expectation.absent_allowed = true;
    } else {
      expectation.put_seqs.push_back(attempts[i].seq);
    }
    if (i >= later) {
      description << (i == later ? ", or the outcome of an unguaranteed "
                                   "later attempt: "
                                 : ", ")
                  << (attempts[i].is_delete ? "delete " : "put ")
                  << attempts[i].seq;
    }
  }
  expectation.description = description.str();
  return expectation;
}

// --- Across keys: the prefix (point-in-time) property ------------------------
//
// Recovery must be point-in-time: the recovered state of every key equals
// what applying exactly the operations with seq <= P produces, for one P
// that the whole volume agrees on, with P at least the last guaranteed seq
// (so no guaranteed operation is lost) and at most the last attempted one.
// A key's state for P is the outcome of its last operation with seq <= P in
// this cycle, or, if it has none, the state the previous check settled.
//
// For one key the P that fit form a union of intervals in seq space: the
// key's state is constant between two of its operations. The check adds
// those intervals for every key into one count per P (a difference array,
// O(operations + keys)); a P fits the whole volume where the count is the
// number of keys. Where none does, the P most keys agree with is the best
// explanation of what went wrong, and the keys that disagree with it make
// the message.

// How many keys ahead of the best P, and how many behind it, a failure
// message names.
inline constexpr size_t kPrefixReportedKeysMax = 4;

struct PrefixVerdict {
  // Why no prefix fits; empty if one does.
  std::optional<std::string> error;
  // The largest P that fits (the recovered state is exactly the operations
  // <= P); on failure, the largest of the P that most keys agree with.
  uint64_t prefix = 0;
};

// `first_seq`: the seq of this cycle's first attempt (the next one if there
// was none); `settled`: every key's state at the previous check; `attempts`:
// this cycle's operations in seq order, consecutive from first_seq;
// `recovered`: every key's state now, indexed like `settled`.
inline PrefixVerdict CheckPrefix(uint64_t first_seq,
                                 const std::vector<KeyState>& settled,
                                 const std::vector<Attempt>& attempts,
                                 const std::vector<KeyState>& recovered) {
  PrefixVerdict verdict;
  verdict.prefix = first_seq - 1;
  const size_t key_count = settled.size();
  if (recovered.size() != key_count) {
    verdict.error = "harness: settled and recovered states differ in size";
    return verdict;
  }
  const size_t n = attempts.size();
  for (size_t i = 0; i < n; ++i) {
    if (attempts[i].seq != first_seq + i || attempts[i].key >= key_count) {
      verdict.error = "harness: attempt " + std::to_string(i) + " has seq " +
                      std::to_string(attempts[i].seq) + " on key " +
                      std::to_string(attempts[i].key);
      return verdict;
    }
  }
  // Index i in [0, n] stands for P = first_seq - 1 + i: the first i
  // attempts applied.
  const auto seq_of = [first_seq](size_t i) { return first_seq - 1 + i; };
  size_t guaranteed_through = 0;  // the smallest index allowed
  for (size_t i = 0; i < n; ++i) {
    if (attempts[i].guaranteed) guaranteed_through = i + 1;
  }

  // Each key's state is constant from `since` (an index) up to its next
  // operation; each stretch in which it matches what was recovered counts.
  std::vector<int64_t> delta(n + 2, 0);
  std::vector<KeyState> state = settled;
  std::vector<size_t> since(key_count, 0);
  const auto close_stretch = [&](uint32_t key, size_t end) {  // inclusive
    if (state[key] == recovered[key]) {
      ++delta[since[key]];
      --delta[end + 1];
    }
  };
  for (size_t j = 0; j < n; ++j) {
    const Attempt& attempt = attempts[j];
    close_stretch(attempt.key, j);  // indices since..j precede attempt j
    state[attempt.key] = attempt.Outcome();
    since[attempt.key] = j + 1;
  }
  for (uint32_t key = 0; key < key_count; ++key) close_stretch(key, n);

  std::vector<size_t> agreeing(n + 1);
  int64_t running = 0;
  std::optional<size_t> fits_below_guarantee;
  for (size_t i = 0; i <= n; ++i) {
    running += delta[i];
    agreeing[i] = static_cast<size_t>(running);
    if (agreeing[i] == key_count && i < guaranteed_through) {
      fits_below_guarantee = i;
    }
  }
  size_t best = guaranteed_through;
  for (size_t i = guaranteed_through; i <= n; ++i) {
    if (agreeing[i] >= agreeing[best]) best = i;
  }
  verdict.prefix = seq_of(best);
  if (agreeing[best] == key_count) return verdict;

  // No P fits: name the keys that disagree with the best one. Their states
  // at `best`, and the operation that set each, take one pass.
  std::vector<std::optional<size_t>> last_op(key_count);
  state = settled;
  for (size_t j = 0; j < best; ++j) {
    state[attempts[j].key] = attempts[j].Outcome();
    last_op[attempts[j].key] = j;
  }
  // Sizes are shown because they choose the log a value goes to.
  const auto put = [](uint32_t key, uint64_t seq) {
    return "put seq " + std::to_string(seq) + " (" +
           std::to_string(ValueSizeFor(key, seq)) + " B)";
  };
  const auto holds = [&put](uint32_t key, const KeyState& key_state) {
    return key_state.present ? put(key, key_state.seq) : std::string("nothing");
  };
  // Keys ahead of P (holding a value put after it) and behind it (the
  // rest: lacking an operation <= P), listed apart: with keys on both sides
  // the logs stopped at different points.
  std::vector<std::string> ahead, behind;
  for (uint32_t key = 0; key < key_count; ++key) {
    const KeyState& found = recovered[key];
    if (found == state[key]) continue;
    std::string line = "key " + std::to_string(key);
    if (found.present && found.seq > verdict.prefix && found.seq <= seq_of(n)) {
      ahead.push_back(line + " holds " + put(key, found.seq) +
                      ", attempted after P");
    } else if (last_op[key]) {
      const Attempt& lacked = attempts[*last_op[key]];
      behind.push_back(
          line + " lacks " + (lacked.guaranteed ? "guaranteed " : "") +
          (lacked.is_delete ? "delete seq " + std::to_string(lacked.seq)
                            : put(key, lacked.seq)) +
          " <= P, holds " + holds(key, found));
    } else {
      behind.push_back(line + " holds " + holds(key, found) +
                       " but P implies " + holds(key, state[key]) +
                       " as at the previous check");
    }
  }
  std::ostringstream message;
  message << "the recovered state is no prefix of this cycle's operations";
  if (n == 0) {
    message << " (none attempted";
  } else {
    message << " (seq " << first_seq << ".." << seq_of(n);
  }
  if (guaranteed_through > 0) {
    message << ", guaranteed through " << seq_of(guaranteed_through);
  }
  message << "): the best is P=" << verdict.prefix << ", which "
          << agreeing[best] << " of " << key_count << " keys agree with";
  if (fits_below_guarantee) {
    message << " (all of them agree with P=" << seq_of(*fits_below_guarantee)
            << ", which loses guaranteed operations)";
  }
  const auto list = [&message](const std::vector<std::string>& lines,
                               const char* what) {
    if (lines.empty()) return;
    message << "; keys " << what << " (" << lines.size() << ")";
    for (size_t i = 0; i < lines.size() && i < kPrefixReportedKeysMax; ++i) {
      message << (i == 0 ? ": " : ", ") << lines[i];
    }
    if (lines.size() > kPrefixReportedKeysMax) message << ", ...";
  };
  list(ahead, "ahead of P");
  list(behind, "behind P");
  verdict.error = message.str();
  return verdict;
}

}  // namespace kvs::crash

#endif  // KVS_TOOLS_CRASH_CHECK_H_
