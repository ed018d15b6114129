// The GT's event lines (docs/oa.md §2): every event the OA block counts leaves
// the model through this interface, in the cycle it happens.  The ledger is
// one listener; the OA counter block (rtl/) will be another, fed the same
// lines, so both count by one rule table.
#ifndef ZESIM_MODEL_EVENTS_H
#define ZESIM_MODEL_EVENTS_H

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "zs/ze_isa.h"

namespace zesim {

enum class MemBytes : uint8_t { L3Read, L3Write, Dram, SlmRead, SlmWrite };

class EventSink {
public:
    virtual ~EventSink() = default;
    // Cycles [from, to) in which nothing changed for the GT: `resident`
    // threads at the start of each cycle, busy or not.
    virtual void gt_span(uint64_t from, uint64_t to, bool busy, uint64_t resident) = 0;
    // Cycles [from, to) in which EU `eu` issued nothing, holding threads or not.
    virtual void eu_span(uint32_t eu, uint64_t from, uint64_t to, bool holding) = 0;
    // EU `eu` issued an instruction in `cycle` (at most one per cycle).
    virtual void eu_issue(uint64_t cycle, uint32_t eu) = 0;
    // An instruction executed (counted per docs/oa.md), with its enabled channels.
    virtual void instruction(uint64_t cycle, enum ze_lat cls, uint32_t lanes) = 0;
    virtual void send(uint64_t cycle, unsigned msg) = 0;
    virtual void bytes(uint64_t cycle, MemBytes level, uint64_t n) = 0;
    virtual void thread_dispatched(uint64_t cycle) = 0;
    virtual void thread_retired(uint64_t cycle) = 0;
    virtual void barrier_release(uint64_t cycle) = 0;
    // Every line has been delivered for all cycles before `cycle`.
    virtual void sync(uint64_t cycle) = 0;
    // The next cycle at which this listener needs a sync (a window or report boundary).
    virtual uint64_t next_sync() const = 0;
    // End of a run: everything before `cycle` has been delivered.
    virtual void flush(uint64_t cycle) = 0;
};

// Fans the lines out to every listener.
class EventLines final : public EventSink {
public:
    void attach(EventSink *s) { sinks_.push_back(s); }
    void gt_span(uint64_t a, uint64_t b, bool busy, uint64_t r) override { each([&](EventSink *s) { s->gt_span(a, b, busy, r); }); }
    void eu_span(uint32_t e, uint64_t a, uint64_t b, bool h) override { each([&](EventSink *s) { s->eu_span(e, a, b, h); }); }
    void eu_issue(uint64_t c, uint32_t e) override { each([&](EventSink *s) { s->eu_issue(c, e); }); }
    void instruction(uint64_t c, enum ze_lat l, uint32_t n) override { each([&](EventSink *s) { s->instruction(c, l, n); }); }
    void send(uint64_t c, unsigned m) override { each([&](EventSink *s) { s->send(c, m); }); }
    void bytes(uint64_t c, MemBytes l, uint64_t n) override { each([&](EventSink *s) { s->bytes(c, l, n); }); }
    void thread_dispatched(uint64_t c) override { each([&](EventSink *s) { s->thread_dispatched(c); }); }
    void thread_retired(uint64_t c) override { each([&](EventSink *s) { s->thread_retired(c); }); }
    void barrier_release(uint64_t c) override { each([&](EventSink *s) { s->barrier_release(c); }); }
    void sync(uint64_t c) override { each([&](EventSink *s) { s->sync(c); }); }
    void flush(uint64_t c) override { each([&](EventSink *s) { s->flush(c); }); }
    uint64_t next_sync() const override
    {
        uint64_t n = std::numeric_limits<uint64_t>::max();
        for (const EventSink *s : sinks_)
            n = std::min(n, s->next_sync());
        return n;
    }

private:
    template <typename F> void each(F f)
    {
        for (EventSink *s : sinks_)
            f(s);
    }
    std::vector<EventSink *> sinks_;
};

}  // namespace zesim

#endif
