#include "workload/request_streams.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "blis/errors.hpp"
#include "blis/go_rand.hpp"
#include "workload/samplers.hpp"
#include "workload/slo_class.hpp"
#include "workload/think_time.hpp"

namespace blis::workload {

namespace {

// 128-bit products for overflow-free integer staggers (a GCC/Clang extension).
__extension__ typedef __int128 Wide;

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

// A drawn length, at most `limit` tokens: one draw's (kMaxRequestTokens), or
// int32 for a multi-turn input holding the whole conversation so far.
int32_t checked_tokens(int64_t n, const std::string& where, const char* what, int64_t limit = kMaxRequestTokens) {
  if (n < 0 || n > limit)
    throw InputError(where, std::string(what) + " of " + std::to_string(n) + " tokens is out of range [0, " +
                                std::to_string(limit) + "]");
  return static_cast<int32_t>(n);
}

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

// Arrivals a client may draw in a row outside all of its lifecycle windows
// (about a second of drawing) before generation gives up: a window far
// beyond the arrivals' pace (10^15 µs at 1000 arrivals per µs) would
// otherwise keep it drawing for months.
constexpr int64_t kMaxSkippedArrivals = 50'000'000;

// Rounds of one multi-turn session.
constexpr int64_t kMaxRounds = 1'000'000;

// A client's lifecycle windows (spec workload §5.6). With windows, an arrival
// outside all of them is dropped; past the last window's end none can match,
// and the client stops there (the reference would keep drawing to the
// horizon, emitting nothing: spec workload §6.12).
class Windows {
 public:
  explicit Windows(const std::optional<std::vector<LifecycleWindow>>& windows)
      : windows_(windows ? &*windows : nullptr) {
    if (windows_)
      for (const auto& w : *windows_) last_end_ = std::max(last_end_, w.end_us);
  }
  bool admits(int64_t t) const {
    if (!windows_) return true;
    return std::any_of(windows_->begin(), windows_->end(),
                       [t](const LifecycleWindow& w) { return w.start_us <= t && t < w.end_us; });
  }
  bool exhausted(int64_t t) const { return windows_ && t >= last_end_; }
  // The earliest window start after `t` (t itself when none).
  int64_t next_start(int64_t t) const {
    int64_t best = t;
    if (windows_)
      for (const auto& w : *windows_)
        if (w.start_us > t && (best == t || w.start_us < best)) best = w.start_us;
    return best;
  }
  // The single-session start offset: the first window's start, else 0.
  int64_t first_start() const { return windows_ && !windows_->empty() ? windows_->front().start_us : 0; }

 private:
  const std::vector<LifecycleWindow>* windows_;
  int64_t last_end_ = std::numeric_limits<int64_t>::min();
};

// What both kinds of client share: the client's stream and samplers, built
// in the reference's order (spec workload §6.6), and its arrival loop.
class ClientStreamBase : public RequestStream {
 protected:
  explicit ClientStreamBase(const StreamSetup& s)
      : RequestStream(*s.client),
        where_(s.where),
        rng_(s.seed),
        arrival_(s.client->arrival, s.rate, s.where),
        input_(s.client->input_distribution, s.where + ".input_distribution"),
        output_(s.client->output_distribution, s.where + ".output_distribution"),
        prefix_(s.prefix),
        horizon_(s.horizon),
        block_size_(s.block_size),
        own_stream_(s.own_stream),
        seed_(s.seed),
        windows_(s.client->lifecycle) {
    // HEAD's per-client arrival sampler takes a seed of its own from the
    // client's stream first, and never draws from it.
    if (s.client->own_rate_per_us) rng_.int63();
  }

  // Draws inter-arrival times until one lands in a window; false once the
  // next arrival would reach the horizon or no window can match any more.
  bool next_arrival() {
    for (int64_t skipped = 0;; ++skipped) {
      const int64_t iat = arrival_.next(rng_);
      if (iat >= horizon_ - t_) return false;  // t + iat >= horizon, without overflow
      t_ += iat;
      if (windows_.admits(t_)) return true;
      if (windows_.exhausted(t_)) return false;
      if (skipped == kMaxSkippedArrivals) {
        const int64_t next = windows_.next_start(t_);
        throw InputError(where_ + ".lifecycle.windows",
                         std::to_string(kMaxSkippedArrivals) + " arrivals in a row fell outside every window (at t = " +
                             std::to_string(t_) + " µs" +
                             (next > t_ ? ", the next window opens at " + std::to_string(next) + " µs" : "") +
                             "); arrivals come too fast for the window to be reached: move it earlier or "
                             "lower the rate");
      }
    }
  }

  int64_t prefix_length() const { return prefix_ ? prefix_->size() : 0; }

  std::string where_;
  GoRand rng_;
  ArrivalSampler arrival_;
  LengthSampler input_;
  LengthSampler output_;
  const SharedPrefix* prefix_;
  int64_t horizon_;
  int32_t block_size_;
  bool own_stream_;  // StreamSetup::own_stream
  int64_t seed_;     // of rng_
  Windows windows_;
  int64_t t_ = 0;
};

// The input length of a multimodal request (spec workload §6.7): text, then
// per modality a count and that many item lengths. The samplers are built at
// the first request, as the reference builds them then (an invalid one fails
// there, not before).
class ModalityLengths {
 public:
  ModalityLengths(const MultimodalSpec& spec, std::string where) : spec_(spec), where_(std::move(where)) {}

  // `media`'s image, audio and video tokens: those drawn.
  int64_t sample(GoRand& rng, WorkloadRequest& media) {
    if (!built_) build();
    int64_t total = text_ ? text_->sample(rng) : 0;
    int64_t drawn[3] = {0, 0, 0};
    for (const Modality& m : modalities_) {
      const int64_t n = m.count.sample(rng);
      // Each item costs a draw or more: bounded as tokens are.
      if (n > kMaxRequestTokens)
        throw InputError(m.where, "a count of " + std::to_string(n) + " items is out of range [0, " +
                                      std::to_string(kMaxRequestTokens) + "]");
      for (int64_t i = 0; i < n; ++i) drawn[m.which] += m.item.sample(rng);
      total += drawn[m.which];
    }
    // The input is checked against kMaxInt32 later: clamped here only.
    media.image_tokens = static_cast<int32_t>(std::clamp<int64_t>(drawn[0], 0, kMaxInt32));
    media.audio_tokens = static_cast<int32_t>(std::clamp<int64_t>(drawn[1], 0, kMaxInt32));
    media.video_tokens = static_cast<int32_t>(std::clamp<int64_t>(drawn[2], 0, kMaxInt32));
    return total == 0 ? 1 : total;
  }

 private:
  struct Modality {
    LengthSampler count;
    LengthSampler item;
    std::string where;  // of the count distribution
    int which;          // 0 image, 1 audio, 2 video
  };

  void build() {
    if (!spec_.text_distribution.type.empty())
      text_.emplace(spec_.text_distribution, where_ + ".text_distribution");
    const auto add = [&](const DistSpec& item, const DistSpec& count, const std::string& name, int which) {
      if (item.type.empty() || count.type.empty()) return;
      const std::string count_where = where_ + "." + name + "_count_distribution";
      LengthSampler c(count, count_where);
      modalities_.push_back({std::move(c), LengthSampler(item, where_ + "." + name + "_distribution"), count_where, which});
    };
    add(spec_.image_distribution, spec_.image_count_distribution, "image", 0);
    add(spec_.audio_distribution, spec_.audio_count_distribution, "audio", 1);
    add(spec_.video_distribution, spec_.video_count_distribution, "video", 2);
    built_ = true;
  }

  const MultimodalSpec& spec_;
  std::string where_;
  bool built_ = false;
  std::optional<LengthSampler> text_;
  std::vector<Modality> modalities_;
};

// An ordinary client (spec workload §6.6): one request per admitted arrival.
class SingleRequestStream final : public ClientStreamBase {
 public:
  explicit SingleRequestStream(const StreamSetup& s) : ClientStreamBase(s) {
    if (s.client->multimodal) multimodal_.emplace(*s.client->multimodal, s.where + ".multimodal");
  }

  bool advance() override {
    if (!next_arrival()) return false;
    auto& hashes = pending_.block_hashes;
    hashes.clear();
    ContentHasher hasher(hashes, block_size_);
    const int64_t prefix_len = prefix_length();
    if (prefix_) prefix_->begin(hashes, hasher, prefix_len);
    // Every block after the prefix's complete ones holds tokens drawn from
    // this client's own stream, which no other request draws again: those
    // tokens are drawn (the stream must advance as the reference's does) but
    // not hashed, and the request's content past the prefix is lazy
    // (WorkloadRequest::own_content).
    const auto tokens = [&](int64_t n) {
      if (own_stream_)
        rng_.skip_int31n(kMaxTokenId, n);
      else
        hasher.draw(rng_, n);
    };
    int64_t in_len = 0, out_len = 0;
    // Draw order: input length, output length, input ids, output ids; a
    // multimodal input draws its ids before the output length.
    if (multimodal_) {
      in_len = checked_tokens(multimodal_->sample(rng_, pending_), where_ + ".multimodal", "an input");
      tokens(in_len);
      out_len = checked_tokens(output_.sample(rng_), where_ + ".output_distribution", "an output");
      tokens(out_len);
    } else {
      in_len = checked_tokens(input_.sample(rng_), where_ + ".input_distribution", "an input");
      out_len = checked_tokens(output_.sample(rng_), where_ + ".output_distribution", "an output");
      if (!own_stream_) hashes.reserve(static_cast<size_t>((prefix_len + in_len + out_len) / block_size_));
      tokens(in_len);   // the client's own prompt tokens
      tokens(out_len);  // the pre-determined response
    }
    pending_.arrival_us = t_;
    pending_.input_tokens = checked_tokens(prefix_len + in_len, where_, "an input", kMaxInt32);
    pending_.output_tokens = static_cast<int32_t>(out_len);
    pending_.max_output_tokens = static_cast<int32_t>(out_len);  // spec workload §1.3
    if (own_stream_) {
      pending_.shareable_blocks = static_cast<int32_t>(hashes.size());
      pending_.own_content = content_seed(++requests_);
    } else {
      pending_.shareable_blocks = WorkloadRequest::kAllShareable;
      pending_.own_content = 0;
    }
    return true;
  }

 private:
  // A seed unique to the client's n-th request (n >= 1): the client's
  // stream (distinct from every other stream's, own_stream_) and n side by
  // side, through a bijective mix, so no two requests of the workload share
  // one while n < 2^33, and none is 0.
  uint64_t content_seed(uint64_t n) const {
    return mix64((static_cast<uint64_t>(static_cast<uint32_t>(GoRand::state_seed(seed_))) << 33) | (n & ((1ULL << 33) - 1)));
  }

  std::optional<ModalityLengths> multimodal_;
  uint64_t requests_ = 0;
};

// A multi-turn client (spec workload §6.8). The reference draws a session
// whole when its start is drawn: every round's lengths and token ids, from
// the client's one stream, before the next session's start. blis advances
// the client's stream past a session the same way (drawing, not hashing),
// keeping a copy of the stream as it was at the session's first round; the
// session then replays its draws from that copy one round at a time, as its
// rounds are emitted. Only the next round of each session in flight is held,
// so memory follows what is in flight, not rounds × context. A session's
// rounds never arrive before its start (think times are >= 0), so a round
// is emitted once no later session can precede it, in (arrival, generation)
// order, the order of the reference's stable sort.
class SessionStream final : public ClientStreamBase {
 public:
  explicit SessionStream(const StreamSetup& s)
      : ClientStreamBase(s),
        turns_(*s.client->reasoning->multi_turn),
        ratio_spec_(s.client->reasoning->reason_ratio_distribution),
        accumulate_(turns_.context_growth == "accumulate"),
        cap_(s.cap),
        track_(s.track_sessions) {
    if (turns_.think_time_us < 0)
      throw InputError(where_ + ".reasoning.multi_turn.think_time_us",
                       "a negative think time (" + std::to_string(turns_.think_time_us) +
                           ") is not supported by blis yet");
    // A session draws every round when it starts (as the reference does):
    // beyond this, one session alone would draw for hours.
    if (turns_.max_rounds > kMaxRounds)
      throw InputError(where_ + ".reasoning.multi_turn.max_rounds",
                       "must be at most " + std::to_string(kMaxRounds) + ", got " + std::to_string(turns_.max_rounds));
    ContentHasher h(prefix_hashes_, block_size_);
    if (prefix_) prefix_->begin(prefix_hashes_, h, prefix_length());
    prefix_state_ = h.hasher();
    prefix_fill_ = h.fill();
  }

  bool advance() override {
    for (;;) {
      if (!ended_ && !next_start_) find_next_start();
      if (!live_.empty() && (ended_ || *next_start_ >= live_.front()->round.arrival)) {
        std::pop_heap(live_.begin(), live_.end(), later);
        std::unique_ptr<Session>& s = live_.back();
        pending_.arrival_us = s->round.arrival;
        pending_.input_tokens = s->round.input_tokens;
        pending_.output_tokens = s->round.output_tokens;
        pending_.max_output_tokens = s->round.output_tokens;
        pending_round_ = s->round.index;
        pending_.session = s->id;
        std::swap(pending_.block_hashes, s->round.hashes);
        if (track_) {
          s->cut.id = s->id;
          s->cut.round0_kept = s->round0_kept;
          pending_ctx_ = s->cut;
        }
        if (next_round(*s)) {
          std::push_heap(live_.begin(), live_.end(), later);
        } else {
          live_.pop_back();
        }
        return true;
      }
      if (ended_) return false;
      const int64_t start = *next_start_;
      next_start_.reset();
      start_session(start);
    }
  }

  const SessionContext* pending_session() const override { return track_ ? &pending_ctx_ : nullptr; }

 private:
  struct Round {
    int64_t index = 0;  // within its session, from 0
    int64_t arrival = 0;
    int32_t input_tokens = 0;
    int32_t output_tokens = 0;
    std::vector<uint64_t> hashes;
  };
  // A session in flight: its replay stream and where its replay stands.
  struct Session {
    explicit Session(const GoRand& r) : rng(r) {}
    GoRand rng;          // the client's stream as it was at this session's round `r`
    uint64_t number = 0; // generation order among the client's sessions
    int64_t id = 0;      // the reference's session id, "sess_<id>"
    bool round0_kept = false;
    SessionContext cut;  // tracked, with accumulation: the context round 1 goes on from
    int64_t r = 0;       // next round to replay
    int64_t t = 0;       // its arrival
    bool past_horizon = false;
    std::vector<uint64_t> ctx_hashes;  // with accumulation: blocks of the conversation so far
    BlockHasher ctx_state{kEmptyPrefixHash};
    int32_t ctx_fill = 0;
    int64_t ctx_len = 0;
    Round round;  // the pending round (the session's next to emit)
  };
  static bool later(const std::unique_ptr<Session>& a, const std::unique_ptr<Session>& b) {
    if (a->round.arrival != b->round.arrival) return a->round.arrival > b->round.arrival;
    return a->number > b->number;  // a session's rounds are in order already
  }

  // Sets next_start_, or ended_ when the client starts no more sessions.
  void find_next_start() {
    if (turns_.single_session) {
      // One session, offset by the first window's start (spec workload §6.8).
      if (single_drawn_) {
        ended_ = true;
        return;
      }
      single_drawn_ = true;
      const int64_t start = saturating_add(windows_.first_start(), arrival_.next(rng_));
      if (start >= horizon_ || !windows_.admits(start)) {
        ended_ = true;
        return;
      }
      next_start_ = start;
      return;
    }
    // Sessions without rounds emit nothing, however many start.
    if (turns_.max_rounds <= 0 || (cap_ > 0 && count_ >= cap_) || !next_arrival()) {
      ended_ = true;
      return;
    }
    next_start_ = t_;
  }

  // Whether round `r` of a session at time `t` is built: kept, or needed
  // as context of later rounds.
  bool kept(int64_t t, bool past_horizon) const { return !past_horizon && windows_.admits(t); }

  // Advances the client's stream past a whole session starting at `start`,
  // as the reference draws it, and puts the session in flight.
  void start_session(int64_t start) {
    if (turns_.max_rounds <= 0) return;
    if (!ratio_built_) {
      if (!ratio_spec_.type.empty()) ratio_.emplace(ratio_spec_, where_ + ".reasoning.reason_ratio_distribution");
      ratio_built_ = true;
    }
    const int64_t id = rng_.int63();  // the session id, "sess_<id>" (closed-loop sessions' seeds follow it)
    auto session = std::make_unique<Session>(rng_);
    session->id = id;
    // The draws of every round, without hashing; length errors surface here,
    // where the reference meets them.
    bool past_horizon = false;
    bool any_kept = false;
    int64_t ctx_len = 0;
    int64_t t = start;
    for (int64_t r = 0; r < turns_.max_rounds; ++r) {
      const int64_t in_len = checked_tokens(input_.sample(rng_), where_ + ".input_distribution", "an input");
      const int64_t out_len = checked_tokens(output_.sample(rng_), where_ + ".output_distribution", "an output");
      past_horizon = past_horizon || t >= horizon_;
      const bool keep = kept(t, past_horizon);
      if (keep || (accumulate_ && !past_horizon))
        checked_tokens(prefix_length() + (accumulate_ ? ctx_len : 0) + in_len, where_, "an input", kMaxInt32);
      any_kept = any_kept || keep;
      skip_tokens(rng_, in_len + out_len);
      if (accumulate_) ctx_len += in_len + out_len;
      if (ratio_) ratio_->sample(rng_);  // the reason ratio: metadata nothing reads
      t = saturating_add(saturating_add(t, turns_.think_time_us), out_len);
    }
    count_ = saturating_add(count_, turns_.max_rounds);  // every generated round counts (§6.8)
    if (!any_kept) return;
    session->number = sessions_++;
    session->t = start;
    if (accumulate_) {
      session->ctx_hashes = prefix_hashes_;
      session->ctx_state = prefix_state_;
      session->ctx_fill = prefix_fill_;
    }
    if (next_round(*session)) {
      live_.push_back(std::move(session));
      std::push_heap(live_.begin(), live_.end(), later);
    }
  }

  // Replays the session up to its next kept round, which becomes its
  // pending round; false when no round is left to emit.
  bool next_round(Session& s) const {
    while (s.r < turns_.max_rounds) {
      GoRand& rng = s.rng;
      const int64_t in_len = input_.sample(rng);
      const int64_t out_len = output_.sample(rng);
      const int64_t t = s.t;
      ++s.r;
      s.past_horizon = s.past_horizon || t >= horizon_;
      if (s.past_horizon) return false;  // every later round is dropped too
      const bool keep = kept(t, false);
      int32_t input_tokens = 0;
      if (accumulate_) {
        // Round r's input is prefix ++ (inputs and outputs of rounds < r) ++
        // its own tokens: its whole sequence is the context of round r + 1.
        input_tokens = static_cast<int32_t>(prefix_length() + s.ctx_len + in_len);
        ContentHasher h(s.ctx_hashes, block_size_);
        h.resume(s.ctx_state, s.ctx_fill);
        h.draw(rng, in_len);
        if (track_ && s.r == 1) {
          // A closed-loop session goes on from round 0's prompt and its output
          // but the last token (HEAD: session.go OnComplete appends the
          // ProgressIndex − input tokens a completed request reached).
          const int64_t kept_out = out_len > 0 ? out_len - 1 : 0;
          h.draw(rng, kept_out);
          s.cut.state = h.hasher();
          s.cut.fill = h.fill();
          s.cut.blocks = s.ctx_hashes.size();
          s.cut.len = s.ctx_len + in_len + kept_out;
          h.draw(rng, out_len - kept_out);
        } else {
          h.draw(rng, out_len);
        }
        s.ctx_state = h.hasher();
        s.ctx_fill = h.fill();
        s.ctx_len += in_len + out_len;
        if (keep) s.round.hashes = s.ctx_hashes;
      } else if (keep) {
        input_tokens = static_cast<int32_t>(prefix_length() + in_len);
        s.round.hashes = prefix_hashes_;
        ContentHasher h(s.round.hashes, block_size_);
        h.resume(prefix_state_, prefix_fill_);
        h.draw(rng, in_len);
        h.draw(rng, out_len);
      } else {
        skip_tokens(rng, in_len + out_len);
      }
      if (ratio_) ratio_->sample(rng);
      // Next round: after the think time plus 1 µs per output token.
      s.t = saturating_add(saturating_add(t, turns_.think_time_us), out_len);
      if (keep) {
        if (s.r == 1) s.round0_kept = true;
        s.round.index = s.r - 1;
        s.round.arrival = t;
        s.round.input_tokens = input_tokens;
        s.round.output_tokens = static_cast<int32_t>(out_len);
        return true;
      }
    }
    return false;
  }

  const MultiTurnSpec& turns_;
  const DistSpec& ratio_spec_;
  bool accumulate_;
  int64_t cap_;
  int64_t count_ = 0;
  bool track_;  // StreamSetup::track_sessions
  SessionContext pending_ctx_;
  bool ratio_built_ = false;
  std::optional<LengthSampler> ratio_;
  bool ended_ = false;
  bool single_drawn_ = false;
  std::optional<int64_t> next_start_;
  uint64_t sessions_ = 0;
  std::vector<std::unique_ptr<Session>> live_;  // min-heap by (pending arrival, session number)
  std::vector<uint64_t> prefix_hashes_;
  BlockHasher prefix_state_{kEmptyPrefixHash};
  int32_t prefix_fill_ = 0;
};

}  // namespace

ConcurrencyStream::ConcurrencyStream(const StreamSetup& s, GoRand& users, int64_t max_users)
    : RequestStream(*s.client),
      where_(s.where),
      input_(s.client->input_distribution, s.where + ".input_distribution"),
      output_(s.client->output_distribution, s.where + ".output_distribution"),
      prefix_(s.prefix),
      horizon_(s.horizon),
      block_size_(s.block_size),
      think_(s.client->think_time_us),
      think_dist_(s.client->think_time_dist) {
  int64_t n = s.client->concurrency;
  if (max_users > 0) n = std::min(n, max_users);
  for (int64_t u = 0; u < n; ++u) {
    user_seeds_.push_back(users.int63());
    blueprint_seeds_.push_back(users.int63());
  }
  blueprints_.resize(user_seeds_.size());
}

namespace {

// A request drawn whole from `rng`, as an ordinary client draws one (spec
// workload §6.6): input length, output length, input ids, output ids, after
// the group's prefix.
void draw_request(GoRand& rng, const LengthSampler& input, const LengthSampler& output, const SharedPrefix* prefix,
                  int32_t block_size, const std::string& where, WorkloadRequest& out) {
  auto& hashes = out.block_hashes;
  hashes.clear();
  ContentHasher hasher(hashes, block_size);
  const int64_t prefix_len = prefix ? prefix->size() : 0;
  if (prefix) prefix->begin(hashes, hasher, prefix_len);
  const int64_t in_len = checked_tokens(input.sample(rng), where + ".input_distribution", "an input");
  const int64_t out_len = checked_tokens(output.sample(rng), where + ".output_distribution", "an output");
  hasher.draw(rng, in_len);
  hasher.draw(rng, out_len);
  out.input_tokens = checked_tokens(prefix_len + in_len, where, "an input", kMaxInt32);
  out.output_tokens = static_cast<int32_t>(out_len);
  out.max_output_tokens = static_cast<int32_t>(out_len);
}

}  // namespace

void ConcurrencyStream::draw(GoRand& rng, WorkloadRequest& out) const {
  draw_request(rng, input_, output_, prefix_, block_size_, where_, out);
}

SessionShape::SessionShape(const StreamSetup& s)
    : where(s.where),
      input(s.client->input_distribution, s.where + ".input_distribution"),
      output(s.client->output_distribution, s.where + ".output_distribution"),
      prefix(s.prefix),
      horizon(s.horizon),
      block_size(s.block_size),
      think(s.client->reasoning->multi_turn->think_time_us),
      max_rounds(s.client->reasoning->multi_turn->max_rounds),
      accumulate(s.client->reasoning->multi_turn->context_growth == "accumulate") {}

SessionRounds::SessionRounds(const SessionShape& shape, int64_t seed, const WorkloadRequest& round0,
                             const SessionContext& ctx)
    : shape_(&shape), rng_(seed) {
  if (!shape.accumulate) return;
  const auto blocks = static_cast<std::ptrdiff_t>(std::min(ctx.blocks, round0.block_hashes.size()));
  ctx_hashes_.assign(round0.block_hashes.begin(), round0.block_hashes.begin() + blocks);
  ctx_state_ = ctx.state;
  ctx_fill_ = ctx.fill;
  ctx_len_ = ctx.len;
}

bool SessionRounds::follow_up(int64_t done_round, int64_t t, WorkloadRequest& out) {
  const SessionShape& sh = *shape_;
  if (done_round >= sh.max_rounds - 1) return false;  // that was the last round
  const int64_t arrival = saturating_add(t, sh.think);
  if (arrival > sh.horizon) return false;
  out.arrival_us = arrival;
  out.own_content = 0;
  out.shareable_blocks = WorkloadRequest::kAllShareable;
  if (!sh.accumulate) {
    draw_request(rng_, sh.input, sh.output, sh.prefix, sh.block_size, sh.where, out);
    return true;
  }
  // The conversation so far, then this round's input and output.
  const int64_t in_len = checked_tokens(sh.input.sample(rng_), sh.where + ".input_distribution", "an input");
  const int64_t out_len = checked_tokens(sh.output.sample(rng_), sh.where + ".output_distribution", "an output");
  const int64_t prefix_len = sh.prefix ? sh.prefix->size() : 0;
  out.input_tokens = checked_tokens(prefix_len + ctx_len_ + in_len, sh.where, "an input", kMaxInt32);
  // The next round goes on from this one's output but its last token (see
  // SessionStream::next_round).
  ContentHasher h(ctx_hashes_, sh.block_size);
  h.resume(ctx_state_, ctx_fill_);
  h.draw(rng_, in_len);
  const int64_t kept_out = out_len > 0 ? out_len - 1 : 0;
  h.draw(rng_, kept_out);
  ctx_state_ = h.hasher();
  ctx_fill_ = h.fill();
  ctx_len_ += in_len + kept_out;
  out.block_hashes = ctx_hashes_;
  ContentHasher last(out.block_hashes, sh.block_size);
  last.resume(ctx_state_, ctx_fill_);
  last.draw(rng_, out_len - kept_out);
  out.output_tokens = static_cast<int32_t>(out_len);
  out.max_output_tokens = static_cast<int32_t>(out_len);
  return true;
}

bool ConcurrencyStream::advance() {
  if (next_user_ >= users()) return false;
  const int64_t u = next_user_;
  const int64_t n = users();
  // The integer stagger of the reference (think·u/N), without overflow.
  const int64_t arrival =
      think_ > 0 && n > 1 ? static_cast<int64_t>((static_cast<Wide>(u) * think_) / n) : 0;
  if (arrival >= horizon_) return false;
  GoRand rng(user_seeds_[static_cast<size_t>(u)]);
  draw(rng, pending_);
  pending_.arrival_us = arrival;
  pending_.user = static_cast<int32_t>(u);
  pending_.round = 0;
  ++next_user_;
  return true;
}

bool ConcurrencyStream::follow_up(int32_t u, int64_t t, WorkloadRequest& out) {
  auto& rng = blueprints_[static_cast<size_t>(u)];
  if (!rng) rng = std::make_unique<GoRand>(blueprint_seeds_[static_cast<size_t>(u)]);
  const int64_t think = think_dist_ ? sample_think_time(*think_dist_, *rng) : think_;
  const int64_t arrival = saturating_add(t, think);
  if (arrival > horizon_) return false;  // spec head §4.2: beyond the horizon, the user stops
  draw(*rng, out);
  out.image_tokens = out.audio_tokens = out.video_tokens = 0;
  out.session = -1;  // a user, not a session: SpecWorkload::session_name
  out.arrival_us = arrival;
  out.slo_class = pending_.slo_class;
  out.tenant_id = pending_.tenant_id;
  out.model = pending_.model;
  out.adapter = pending_.adapter;
  return true;
}

RequestStream::RequestStream(const ClientSpec& client) {
  pending_.slo_class = *slo_class_from_name(client.slo_class);
  pending_.tenant_id = client.tenant_id;
  pending_.model = client.model;
  pending_.adapter = client.adapter;
}

void RequestStream::take(WorkloadRequest& out) {
  out.arrival_us = pending_.arrival_us;
  out.input_tokens = pending_.input_tokens;
  out.output_tokens = pending_.output_tokens;
  out.max_output_tokens = pending_.max_output_tokens;
  out.slo_class = pending_.slo_class;
  out.tenant_id = pending_.tenant_id;
  out.model = pending_.model;
  out.adapter = pending_.adapter;
  out.user = pending_.user;
  out.round = pending_.round;
  out.session = pending_.session;
  std::swap(out.block_hashes, pending_.block_hashes);
  out.image_tokens = pending_.image_tokens;
  out.audio_tokens = pending_.audio_tokens;
  out.video_tokens = pending_.video_tokens;
  out.shareable_blocks = pending_.shareable_blocks;
  out.own_content = pending_.own_content;
}

std::vector<bool> own_streams(const std::vector<int64_t>& seeds, int64_t also_taken) {
  std::map<int32_t, int> uses;
  ++uses[GoRand::state_seed(also_taken)];
  for (int64_t s : seeds) ++uses[GoRand::state_seed(s)];
  std::vector<bool> own;
  own.reserve(seeds.size());
  for (int64_t s : seeds) own.push_back(uses[GoRand::state_seed(s)] == 1);
  return own;
}

std::unique_ptr<RequestStream> make_request_stream(const StreamSetup& setup) {
  const ClientSpec& c = *setup.client;
  // A reasoning block without multi_turn changes nothing; with it the
  // multimodal block is ignored (spec workload §5.7).
  if (c.reasoning && c.reasoning->multi_turn) return std::make_unique<SessionStream>(setup);
  return std::make_unique<SingleRequestStream>(setup);
}

}  // namespace blis::workload
