// The scheduler alone: admission against the KV cache in arrival order, and each step's batch
// (decoding rows first, prefill chunks capped while anything decodes), without a model.
#include "engine/scheduler.hpp"

#include <gtest/gtest.h>

namespace lpx::core {
namespace {

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest() : cache(shape()), scheduler(cache, config()) {}

  static KvCacheShape shape() {
    KvCacheShape s;
    s.n_layer = 1;
    s.n_kv_heads = 1;
    s.head_dim = 2;
    s.block_size = 4;
    s.n_blocks = 8;  // 32 positions
    s.host_storage = false;
    return s;
  }
  const EngineConfig& config() {
    cfg.context_size = 16;
    cfg.max_sequences = 3;
    cfg.kv_cache_tokens = 32;
    cfg.batch_tokens = 10;
    cfg.prefill_tokens_while_decoding = 3;
    cfg.block_size = 4;
    return cfg;
  }
  Request* submit(std::uint64_t id, std::uint32_t prompt_length, std::uint32_t positions) {
    auto r = std::make_unique<Request>();
    r->id = id;
    r->prompt.assign(prompt_length, static_cast<std::int32_t>(id));
    r->positions_needed = positions;
    Request* raw = r.get();
    scheduler.enqueue(std::move(r));
    return raw;
  }

  EngineConfig cfg;
  KvCache cache;
  Scheduler scheduler;
  Batch batch;
  std::vector<Request*> rows;
};

TEST_F(SchedulerTest, AdmitsInOrderWhileTheCacheAndTheSlotsLast) {
  Request* a = submit(1, 5, 16);  // 4 blocks
  Request* b = submit(2, 5, 12);  // 3 blocks
  Request* c = submit(3, 5, 8);   // 2 blocks: only 1 left, so it waits...
  Request* d = submit(4, 1, 4);   // ...and so does this one, though it would fit (no overtaking)
  scheduler.admit_waiting();
  EXPECT_NE(a->sequence, nullptr);
  EXPECT_NE(b->sequence, nullptr);
  EXPECT_EQ(c->sequence, nullptr);
  EXPECT_EQ(d->sequence, nullptr);
  EXPECT_EQ(scheduler.running_count(), 2u);
  EXPECT_EQ(scheduler.waiting_count(), 2u);
  EXPECT_EQ(cache.free_blocks(), 1u);

  scheduler.release(*a);  // its 4 blocks come back
  scheduler.drop_finished();
  scheduler.admit_waiting();
  EXPECT_NE(c->sequence, nullptr);
  EXPECT_NE(d->sequence, nullptr);
  EXPECT_EQ(scheduler.running_count(), 3u);
}

TEST_F(SchedulerTest, ARequestThatCanNeverFitCarriesAnAdmissionError) {
  Request* huge = submit(1, 5, 40);  // more than the 32-position pool
  scheduler.admit_waiting();
  EXPECT_EQ(huge->sequence, nullptr);
  EXPECT_FALSE(huge->admission_error.empty());
  EXPECT_EQ(scheduler.waiting_count(), 0u) << "it moves on, to be finished by the next step";
}

TEST_F(SchedulerTest, DecodingRowsComeFirstAndPrefillIsCappedWhileAnythingDecodes) {
  Request* decoding = submit(1, 2, 8);
  Request* prefilling = submit(2, 9, 12);
  scheduler.admit_waiting();
  decoding->prompt_done = 2;  // its prompt is in the cache: it decodes
  decoding->sequence->tokens = {1, 1};
  decoding->next_token = 42;
  scheduler.plan(batch, rows);
  ASSERT_EQ(batch.rows(), 1u + 3u) << "one decode row, then prefill capped at 3";
  EXPECT_EQ(batch.tokens[0], 42);
  EXPECT_EQ(batch.positions[0], 2);
  EXPECT_EQ(batch.positions[1], 0);
  EXPECT_EQ(batch.positions[3], 2);
  ASSERT_EQ(rows.size(), 1u) << "the prefill chunk does not end its prompt: no logits wanted";
  EXPECT_EQ(rows[0], decoding);

  prefilling->prompt_done = 6;  // the last 3 prompt tokens: this chunk ends the prompt
  prefilling->sequence->tokens.assign(6, 2);
  scheduler.plan(batch, rows);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], prefilling);
  EXPECT_EQ(batch.output_rows[1], 3u) << "the logits of the prompt's last token";
}

TEST_F(SchedulerTest, WithNothingDecodingPrefillTakesTheWholeBudget) {
  submit(1, 9, 12);
  submit(2, 9, 12);
  scheduler.admit_waiting();
  scheduler.plan(batch, rows);
  EXPECT_EQ(batch.rows(), 10u) << "batch_tokens, split over the prompts in order";
  ASSERT_EQ(batch.sequences.size(), 2u);
  EXPECT_EQ(batch.sequences[0].n_rows, 9u);
  EXPECT_EQ(batch.sequences[1].n_rows, 1u);
  ASSERT_EQ(rows.size(), 1u);
}

TEST_F(SchedulerTest, CancelledRequestsGetNoRows) {
  Request* a = submit(1, 4, 8);
  submit(2, 4, 8);
  scheduler.admit_waiting();
  scheduler.cancel(1);
  EXPECT_TRUE(a->cancel);
  scheduler.plan(batch, rows);
  ASSERT_EQ(batch.sequences.size(), 1u);
  EXPECT_EQ(batch.tokens[0], 2);
}

TEST_F(SchedulerTest, ASessionReusesItsCachedPrefixButRecomputesTheLastPromptToken) {
  scheduler.add_session(7);
  Session* session = scheduler.session(7);
  ASSERT_NE(session, nullptr);
  Request* first = submit(1, 5, 8);
  first->session = 7;
  scheduler.admit_waiting();
  first->sequence->tokens = {1, 1, 1, 1, 1, 9};  // the prompt, then one generated token
  scheduler.release(*first);
  scheduler.drop_finished();
  EXPECT_FALSE(session->busy);

  Request* second = submit(2, 5, 8);
  second->prompt = {1, 1, 1, 1, 1};
  second->session = 7;
  scheduler.admit_waiting();
  EXPECT_EQ(second->cached, 4u) << "the common prefix, less the prompt's last token";
  EXPECT_EQ(second->prompt_done, 4u);
  EXPECT_EQ(scheduler.session(99), nullptr);
}

// Every layer windowed (kv_window 5, blocks of 4): as a sequence advances, the blocks its next
// rows cannot reach go back to the pool, and a finished request returns the rest.
TEST_F(SchedulerTest, WithAWindowOnEveryLayerBlocksBehindItAreGivenBack) {
  cfg.kv_window = 5;
  Request* r = submit(1, 10, 16);
  scheduler.admit_waiting();
  ASSERT_NE(r->sequence, nullptr);
  EXPECT_EQ(cache.free_blocks(), 4u);
  r->sequence->tokens.assign(10, 1);  // the next row, at 10, attends from 6 on
  scheduler.drop_out_of_window(*r);
  EXPECT_EQ(cache.free_blocks(), 5u);
  EXPECT_EQ(r->sequence->blocks.first_held_position(4), 4u);
  r->sequence->tokens.assign(14, 1);  // from 10 on
  scheduler.drop_out_of_window(*r);
  EXPECT_EQ(cache.free_blocks(), 6u);
  scheduler.release(*r);
  scheduler.drop_finished();
  EXPECT_EQ(cache.free_blocks(), 8u);

  cfg.kv_window = 0;  // some layer attends globally: everything stays
  Request* global = submit(2, 10, 16);
  scheduler.admit_waiting();
  global->sequence->tokens.assign(14, 1);
  scheduler.drop_out_of_window(*global);
  EXPECT_EQ(cache.free_blocks(), 4u);
}

// A session's next turn reuses its prefix when the rows it recomputes find their window still
// held (a continuation always does); a turn that rewinds behind the dropped blocks recomputes
// from the start.
TEST_F(SchedulerTest, ASessionReusesAWindowedPrefixOnlyWhereTheWindowIsStillHeld) {
  cfg.kv_window = 5;
  scheduler.add_session(7);
  Request* first = submit(1, 5, 16);
  first->session = 7;
  scheduler.admit_waiting();
  std::vector<std::int32_t> history;
  for (std::int32_t t = 0; t < 13; ++t) history.push_back(100 + t);
  first->sequence->tokens = history;
  scheduler.drop_out_of_window(*first);  // the next row, at 13, attends from 9: 0-7 go
  EXPECT_EQ(first->sequence->blocks.first_held_position(4), 8u);
  scheduler.release(*first);
  scheduler.drop_finished();

  Request* next = submit(2, 15, 16);  // the history and two new tokens
  next->prompt = history;
  next->prompt.insert(next->prompt.end(), {7, 8});
  next->session = 7;
  scheduler.admit_waiting();
  EXPECT_EQ(next->cached, 13u);
  next->sequence->tokens = next->prompt;
  scheduler.release(*next);
  scheduler.drop_finished();

  Request* rewind = submit(3, 12, 16);  // differs from position 9: row 9 needs 5-8, gone
  rewind->prompt.assign(history.begin(), history.begin() + 9);
  rewind->prompt.insert(rewind->prompt.end(), {1, 2, 3});
  rewind->session = 7;
  scheduler.admit_waiting();
  ASSERT_NE(rewind->sequence, nullptr);
  EXPECT_EQ(rewind->cached, 0u);
  EXPECT_EQ(rewind->sequence->blocks.first_held_position(4), 0u) << "every block held again";
}

}  // namespace
}  // namespace lpx::core
