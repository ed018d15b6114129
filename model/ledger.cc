#include "ledger.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace zesim {

namespace {

void append_array(std::string &s, const char *name, const std::vector<uint64_t> &v)
{
    s += ",\"";
    s += name;
    s += "\":[";
    for (size_t i = 0; i < v.size(); i++) {
        if (i)
            s += ',';
        s += std::to_string(v[i]);
    }
    s += ']';
}

void append_field(std::string &s, const char *name, uint64_t v, bool first = false)
{
    if (!first)
        s += ',';
    s += '"';
    s += name;
    s += "\":";
    s += std::to_string(v);
}

}  // namespace

void LedgerWindow::reset(uint64_t idx, uint64_t s, uint64_t e, size_t eus)
{
    *this = LedgerWindow{};
    index = idx;
    start = s;
    end = e;
    eu_active.assign(eus, 0);
    eu_stall.assign(eus, 0);
    eu_idle.assign(eus, 0);
}

std::string LedgerWindow::json() const
{
    std::string s = "{";
    append_field(s, "window", index, true);
    append_field(s, "start", start);
    append_field(s, "end", end);
    append_field(s, "gpu_busy", gpu_busy);
    append_field(s, "thread_cycles", thread_cycles);
    append_field(s, "threads_dispatched", threads_dispatched);
    append_field(s, "threads_retired", threads_retired);
    append_array(s, "eu_active", eu_active);
    append_array(s, "eu_stall", eu_stall);
    append_array(s, "eu_idle", eu_idle);
    s += ",\"inst\":{";
    for (int i = 0; i < ZE_LAT_COUNT; i++)
        append_field(s, ze_lat_name(ze_lat(i)), inst[i], i == 0);
    s += '}';
    append_field(s, "lane_ops", lane_ops);
    s += ",\"sends\":{";
    bool first = true;
    for (unsigned m = 0; m < 16; m++)
        if (const ze_msg_info_t *mi = ze_msg_info(m)) {
            append_field(s, mi->name, sends[m], first);
            first = false;
        }
    s += '}';
    s += ",\"bytes\":{";
    append_field(s, "l3_read", l3_read, true);
    append_field(s, "l3_write", l3_write);
    append_field(s, "dram", dram);
    append_field(s, "slm_read", slm_read);
    append_field(s, "slm_write", slm_write);
    s += '}';
    append_field(s, "barriers", barriers);
    s += "}\n";
    return s;
}

void Ledger::configure(size_t eus, uint64_t window)
{
    eus_ = eus;
    window_ = window ? window : 10000;
    cur_.reset(0, 0, window_, eus_);
}

void Ledger::gt_span(uint64_t from, uint64_t to, bool busy, uint64_t resident)
{
    if (busy)
        cur_.gpu_busy += to - from;
    cur_.thread_cycles += resident * (to - from);
}

void Ledger::eu_span(uint32_t eu, uint64_t from, uint64_t to, bool holding)
{
    (holding ? cur_.eu_stall : cur_.eu_idle)[eu] += to - from;
}

void Ledger::bytes(uint64_t, MemBytes level, uint64_t n)
{
    switch (level) {
    case MemBytes::L3Read: cur_.l3_read += n; break;
    case MemBytes::L3Write: cur_.l3_write += n; break;
    case MemBytes::Dram: cur_.dram += n; break;
    case MemBytes::SlmRead: cur_.slm_read += n; break;
    case MemBytes::SlmWrite: cur_.slm_write += n; break;
    }
}

Ledger::~Ledger()
{
    if (file_) {
        flush_file();
        std::fclose(file_);
    }
}

void Ledger::open_file(const std::string &path)
{
    if (file_)
        close_file();
    file_ = std::fopen(path.c_str(), "w");
    if (!file_)
        throw std::runtime_error(path + ": " + std::strerror(errno));
    file_path_ = path;
    file_failed_ = false;
    file_flushed_ = std::chrono::steady_clock::now();
}

void Ledger::flush_file()
{
    if (!file_)
        return;
    if ((std::fflush(file_) != 0 || std::ferror(file_)) && !file_failed_) {
        file_failed_ = true;
        std::fprintf(stderr, "zesim-gpu: ledger %s: write failed: %s\n", file_path_.c_str(), std::strerror(errno));
    }
    file_flushed_ = std::chrono::steady_clock::now();
}

void Ledger::close_file()
{
    if (!file_)
        return;
    flush_file();
    const bool failed = std::fclose(file_) != 0 || file_failed_;
    file_ = nullptr;
    if (failed)
        throw std::runtime_error(file_path_ + ": write failed");
}

void Ledger::set_retention(size_t keep_windows, size_t keep_bytes)
{
    keep_windows_ = keep_windows;
    keep_bytes_ = keep_bytes;
    trim();
}

void Ledger::set_subscribed(bool on)
{
    subscribed_ = on;
    trim();
}

// Not while subscribed (the consumer holds time instead: full()).  The newest
// window is kept even if it alone exceeds keep_bytes (unless keep_windows = 0).
void Ledger::trim()
{
    if (subscribed_)
        return;
    while (!retained_.empty() && (retained_.size() > keep_windows_ ||
                                  (retained_.size() > 1 && retained_bytes_ > keep_bytes_))) {
        retained_bytes_ -= retained_.front().size();
        retained_.pop_front();
        dropped_++;
        dropped_total_++;
    }
}

void Ledger::close_window()
{
    closed_++;
    const bool retain = subscribed_ || keep_windows_ > 0;
    if (!file_ && !retain) {
        dropped_++;
        dropped_total_++;
        return;
    }
    std::string line = cur_.json();
    if (file_) {
        if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() && !file_failed_) {
            file_failed_ = true;
            std::fprintf(stderr, "zesim-gpu: ledger %s: write failed: %s\n", file_path_.c_str(), std::strerror(errno));
        }
        if (std::chrono::steady_clock::now() - file_flushed_ >= std::chrono::milliseconds(100))
            flush_file();
    }
    if (!retain) {
        dropped_++;
        dropped_total_++;
        return;
    }
    retained_bytes_ += line.size();
    retained_.push_back(std::move(line));
    trim();
}

void Ledger::sync(uint64_t cycle)
{
    while (cur_.end <= cycle) {
        close_window();
        const uint64_t idx = cur_.index + 1, end = cur_.end;
        cur_.reset(idx, end, end + window_, eus_);
    }
}

void Ledger::flush(uint64_t cycle)
{
    if (cycle <= cur_.start)
        return;
    cur_.end = cycle;
    close_window();
    cur_.reset(cur_.index + 1, cycle, cycle + window_, eus_);
    flush_file();
}

Ledger::Batch Ledger::drain()
{
    Batch b;
    size_t n = 0;
    for (const std::string &l : retained_)
        n += l.size();
    b.lines.reserve(n);
    for (const std::string &l : retained_)
        b.lines += l;
    b.windows = retained_.size();
    b.dropped = dropped_;
    // Release the memory, not only the contents.
    std::deque<std::string>().swap(retained_);
    retained_bytes_ = 0;
    dropped_ = 0;
    flush_file();
    return b;
}

void Ledger::debug_snapshot(DebugSnapshot s)
{
    s.seq = ++snap_seq_;
    snaps_.push_back(s);
    if (snaps_.size() > kKeepSnapshots)
        snaps_.pop_front();
}

std::vector<DebugSnapshot> Ledger::take_debug_snapshots()
{
    std::vector<DebugSnapshot> v(snaps_.begin(), snaps_.end());
    snaps_.clear();
    return v;
}

namespace {

void put_array(std::string &o, const char *key, const uint32_t *v, size_t n)
{
    o += ",\"";
    o += key;
    o += "\":[";
    for (size_t i = 0; i < n; i++) {
        if (i)
            o += ',';
        o += std::to_string(v[i]);
    }
    o += ']';
}

}  // namespace

std::string DebugSnapshot::json() const
{
    std::string o = "{\"seq\":" + std::to_string(seq) + ",\"kind\":\"" + (resume ? "resume" : "stop") +
                    "\",\"tid\":" + std::to_string(tid) + ",\"eu\":" + std::to_string(eu) +
                    ",\"slot\":" + std::to_string(slot) + ",\"slice\":" + std::to_string(slice) +
                    ",\"subslice\":" + std::to_string(subslice) +
                    ",\"eu_in_subslice\":" + std::to_string(eu_in_subslice) +
                    ",\"slot_index\":" + std::to_string(slot_index) + ",\"reason\":" + std::to_string(reason) +
                    ",\"slot_va\":" + std::to_string(slot_va) + ",\"kernel_va\":" + std::to_string(kernel_va) +
                    ",\"cycle\":" + std::to_string(cycle) + ",\"ip\":" + std::to_string(ip) +
                    ",\"ib\":" + std::to_string(ib);
    // The GRF as the little-endian bytes of r0..r127 (the slot's GRF set).
    static const char hexd[] = "0123456789abcdef";
    o += ",\"grf\":\"";
    for (unsigned r = 0; r < 128; r++)
        for (unsigned k = 0; k < 8; k++)
            for (unsigned b = 0; b < 4; b++) {
                const unsigned byte = (grf[r][k] >> (8 * b)) & 0xff;
                o += hexd[byte >> 4];
                o += hexd[byte & 15];
            }
    o += '"';
    put_array(o, "a0", a0, 8);
    put_array(o, "f", f, 2);
    put_array(o, "sr0", sr0, 4);
    put_array(o, "cr0", cr0, 4);
    put_array(o, "ce", &ce, 1);
    put_array(o, "tdr", tdr, 8);
    put_array(o, "acc0", acc[0], 8);
    put_array(o, "acc1", acc[1], 8);
    put_array(o, "dbg0", dbg0, 2);
    put_array(o, "tm0", tm0, 2);
    o += ",\"cf_depth\":" + std::to_string(cf_depth) + ",\"ret_depth\":" + std::to_string(ret_depth) +
         ",\"fault_va\":" + std::to_string(fault_va) + "}";
    return o;
}

}  // namespace zesim
