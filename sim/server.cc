#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "config.h"
#include "stimulus.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"
#include "zs/hw_if.h"

namespace zesim {

namespace {

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

struct Client {
    int fd = -1;
    std::vector<uint8_t> in;
    bool waiting_idle = false;
    zk_file_t *file = nullptr;          // after kOpen
    std::vector<uint8_t> pending_wait;  // a WAIT_USER_FENCE argument still waiting
    std::chrono::steady_clock::time_point deadline;
    bool forever = false;
};

void put32(std::vector<uint8_t> &b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b.push_back(uint8_t(v >> (8 * i)));
}

void put64(std::vector<uint8_t> &b, uint64_t v)
{
    put32(b, uint32_t(v));
    put32(b, uint32_t(v >> 32));
}

uint32_t get32(const uint8_t *p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

// Send one message, optionally with a file descriptor.  A client that cannot
// take it (gone, or not reading) loses its connection, never the daemon.
bool send_msg(int fd, uint32_t type, const std::vector<uint8_t> &payload, int pass_fd = -1)
{
    std::vector<uint8_t> m;
    put32(m, kWireMagic);
    put32(m, type);
    put32(m, uint32_t(payload.size()));
    m.insert(m.end(), payload.begin(), payload.end());
    size_t off = 0;
    while (off < m.size()) {
        struct iovec iov = {m.data() + off, m.size() - off};
        struct msghdr mh = {};
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        char ctrl[CMSG_SPACE(sizeof(int))] = {};
        if (pass_fd >= 0 && off == 0) {
            mh.msg_control = ctrl;
            mh.msg_controllen = sizeof(ctrl);
            struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int));
            std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
        }
        const ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        off += size_t(n);
    }
    return true;
}

bool send_text(int fd, uint32_t type, const std::string &s)
{
    return send_msg(fd, type, std::vector<uint8_t>(s.begin(), s.end()));
}

int listen_on(const std::string &path)
{
    if (path.empty())
        throw std::runtime_error("no socket path: use --socket PATH or set ZESIM_SOCKET");
    if (path.size() >= sizeof(sockaddr_un::sun_path))
        throw std::runtime_error("socket path too long (max " + std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                                 " bytes): " + path);
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) {
        if (mkdir(dir.c_str(), 0700) != 0)
            throw std::runtime_error("cannot create socket directory " + dir + ": " + std::strerror(errno));
    } else if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        throw std::runtime_error("socket directory " + dir + " must be a directory owned by you with mode 0700");
    }
    {
        // Never take over the socket of a daemon that is still serving.
        const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un pa = {};
        pa.sun_family = AF_UNIX;
        std::memcpy(pa.sun_path, path.c_str(), path.size());
        const bool live = probe >= 0 && connect(probe, reinterpret_cast<sockaddr *>(&pa), sizeof(pa)) == 0;
        if (probe >= 0)
            close(probe);
        if (live)
            throw std::runtime_error("a daemon already serves " + path);
    }
    // Bind under a temporary name and rename once listening: the path never
    // names a socket that refuses connections (clients wait for it to appear).
    const std::string tmp = path + ".new";
    if (tmp.size() >= sizeof(sockaddr_un::sun_path))
        throw std::runtime_error("socket path too long: " + path);
    unlink(tmp.c_str());
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    sockaddr_un a = {};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, tmp.c_str(), tmp.size());
    if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 || listen(fd, 64) != 0 ||
        rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        close(fd);
        unlink(tmp.c_str());
        throw std::runtime_error("cannot listen on " + path + ": " + std::strerror(err));
    }
    return fd;
}

class Reader {
public:
    Reader(const uint8_t *p, uint32_t n) : p_(p), n_(n) {}
    bool u32(uint32_t &v)
    {
        if (n_ - off_ < 4)
            return false;
        v = get32(p_ + off_);
        off_ += 4;
        return true;
    }
    const uint8_t *bytes(uint32_t len)
    {
        if (n_ - off_ < len)
            return nullptr;
        const uint8_t *r = p_ + off_;
        off_ += len;
        return r;
    }
    bool done() const { return off_ == n_; }

private:
    const uint8_t *p_;
    uint32_t n_, off_ = 0;
};

constexpr uint32_t kMaxIoctlArg = 4096;
constexpr uint32_t kMaxBlob = 256u << 10;

class Server {
public:
    Server(Device &dev, GtTop &top, const ServerOptions &opt) : dev_(dev), top_(top), opt_(opt)
    {
        kmd_ = zk_create(&dev_);
        if (!kmd_)
            throw std::runtime_error("cannot create the KMD");
        zk_set_job_timeout(kmd_, opt_.job_timeout_ms);
        zk_set_fault_mode(kmd_, opt_.fault_continue ? ZK_FAULT_CONTINUE : ZK_FAULT_FAIL);
        zk_set_timeslice(kmd_, opt_.timeslice_cycles);
    }
    ~Server() { zk_destroy(kmd_); }

    bool ioctl_reply(Client &c, int ret, const std::vector<uint8_t> &arg, const std::vector<std::vector<uint8_t>> &outs)
    {
        std::vector<uint8_t> b;
        put32(b, uint32_t(ret));
        put32(b, uint32_t(arg.size()));
        b.insert(b.end(), arg.begin(), arg.end());
        put32(b, uint32_t(outs.size()));
        for (const auto &o : outs) {
            put32(b, uint32_t(o.size()));
            b.insert(b.end(), o.begin(), o.end());
        }
        return send_msg(c.fd, kIoctl, b);
    }

    // kIoctl: unmarshal, run the KMD, marshal the reply (docs/uapi.md).
    bool do_ioctl(Client &c, const uint8_t *p, uint32_t len)
    {
        Reader r(p, len);
        uint32_t cmd, arg_size, nin, nout;
        const uint8_t *arg;
        if (!r.u32(cmd) || !r.u32(arg_size) || arg_size > kMaxIoctlArg || !(arg = r.bytes(arg_size)) || !r.u32(nin) ||
            !r.u32(nout) || nin > ZK_MAX_BLOBS || nout > ZK_MAX_BLOBS)
            return send_text(c.fd, kError, "malformed ioctl request");
        zk_blob_t in[ZK_MAX_BLOBS];
        for (uint32_t i = 0; i < nin; i++) {
            uint32_t n;
            if (!r.u32(n) || n > kMaxBlob || !(in[i].data = r.bytes(n)))
                return send_text(c.fd, kError, "malformed ioctl request");
            in[i].len = n;
        }
        std::vector<std::vector<uint8_t>> outs(nout);
        zk_out_blob_t out[ZK_MAX_BLOBS];
        for (uint32_t i = 0; i < nout; i++) {
            uint32_t n;
            if (!r.u32(n) || n > kMaxBlob)
                return send_text(c.fd, kError, "malformed ioctl request");
            outs[i].assign(n, 0);
            out[i] = {outs[i].data(), n};
        }
        if (!r.done())
            return send_text(c.fd, kError, "malformed ioctl request");
        std::vector<uint8_t> a(arg, arg + arg_size);
        const int ret = zk_ioctl(c.file, cmd, a.data(), arg_size, in, nin, out, nout);
        for (uint32_t i = 0; i < nout; i++)
            outs[i].resize(out[i].len);  // the bytes the KMD wrote
        zk_service(kmd_);
        if (ret == ZK_PENDING) {
            const auto *w = reinterpret_cast<const drm_zesim_wait_user_fence *>(a.data());
            c.pending_wait = a;
            // Timeouts beyond a year are forever (and cannot overflow the clock).
            c.forever = w->timeout < 0 || w->timeout > 365ll * 24 * 3600 * 1000000000ll;
            c.deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(c.forever ? 0 : w->timeout);
            return true;
        }
        return ioctl_reply(c, ret, a, outs);
    }

    // Finish fence waits that are satisfied, failed or timed out.
    bool check_wait(Client &c)
    {
        if (c.pending_wait.empty())
            return true;
        int ret = zk_wait_check(c.file, c.pending_wait.data());
        if (ret == ZK_PENDING) {
            if (c.forever || std::chrono::steady_clock::now() < c.deadline)
                return true;
            ret = -ETIME;
        }
        std::vector<uint8_t> a;
        a.swap(c.pending_wait);
        return ioctl_reply(c, ret, a, {});
    }

    // Returns false when the client must be dropped.
    bool handle(Client &c, uint32_t type, const uint8_t *p, uint32_t len)
    {
        auto error = [&](const std::string &why) { return send_text(c.fd, kError, why); };
        const bool test_only = (type >= kMmioRead && type <= kKmdStats) || type == kShutdown;
        const bool kmd_call = type == kIoctl || type == kMmap;
        if (kmd_call && !c.file)
            return error("open the device (kOpen) before ioctl or mmap");
        if (!c.pending_wait.empty())
            return error("request while an ioctl is still waiting");
        if (test_only && !opt_.test_channel)
            return error("request " + std::to_string(type) + " needs the daemon's --test-channel");
        switch (type) {
        case kHello: {
            std::vector<uint8_t> b;
            put32(b, kWireVersion);
            const std::string d = describe(dev_.gt().config());
            b.insert(b.end(), d.begin(), d.end());
            return send_msg(c.fd, kHello, b);
        }
        case kShutdown:
            stop_ = true;
            return send_msg(c.fd, kShutdown, {});
        case kWaitIdle:
            c.waiting_idle = true;
            return true;
        case kOpen:
            if ((len != 4 && len != 8) || c.file)
                return error(c.file ? "this connection already has a DRM file"
                                    : "OPEN takes a 4-byte pid and optionally a 4-byte job timeout in ms");
            c.file = zk_open(kmd_, int(get32(p)));
            if (!c.file)
                return error("out of memory");
            if (len == 8)
                zk_set_file_job_timeout(c.file, get32(p + 4));
            return send_msg(c.fd, kOpen, {});
        case kIoctl:
            return do_ioctl(c, p, len);
        case kMmap: {
            if (len != 16)
                return error("MMAP takes offset and length (16 bytes)");
            const uint64_t off = uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32;
            const uint64_t n = uint64_t(get32(p + 8)) | uint64_t(get32(p + 12)) << 32;
            int memfd = -1;
            const int ret = zk_mmap_lookup(c.file, off, n, &memfd);
            std::vector<uint8_t> b;
            put32(b, uint32_t(ret));
            return send_msg(c.fd, kMmap, b, ret == 0 ? memfd : -1);
        }
        case kKmdStats: {
            zk_stats_t st;
            zk_get_stats(kmd_, &st);
            char buf[1024];
            snprintf(buf, sizeof(buf),
                     "{\"files\":%u,\"bos\":%u,\"vms\":%u,\"queues\":%u,\"jobs\":%u,\"bo_bytes\":%llu,"
                     "\"pt_bytes\":%llu,\"free_bytes\":%llu,\"jobs_completed\":%llu,\"jobs_cancelled\":%llu,"
                     "\"engine_resets\":%llu,\"preemptions\":%llu,\"jobs_timed_out\":%llu,\"timeslices\":%llu,\"jobs_faulted\":%llu,"
                     "\"eu_faults\":%llu}",
                     st.files, st.bos, st.vms, st.queues, st.jobs, (unsigned long long)st.bo_bytes,
                     (unsigned long long)st.pt_bytes, (unsigned long long)st.free_bytes,
                     (unsigned long long)st.jobs_completed, (unsigned long long)st.jobs_cancelled,
                     (unsigned long long)st.engine_resets, (unsigned long long)st.preemptions,
                     (unsigned long long)st.jobs_timed_out, (unsigned long long)st.timeslices,
                     (unsigned long long)st.jobs_faulted,
                     (unsigned long long)st.eu_faults);
            return send_text(c.fd, kKmdStats, buf);
        }
        case kMmioRead: {
            if (len != 4)
                return error("MMIO_READ takes a 4-byte offset");
            std::vector<uint8_t> b;
            put32(b, zs_hw_mmio_read(&dev_, get32(p)));
            return send_msg(c.fd, kMmioRead, b);
        }
        case kMmioWrite:
            if (len != 8)
                return error("MMIO_WRITE takes offset and value (8 bytes)");
            zs_hw_mmio_write(&dev_, get32(p), get32(p + 4));
            return send_msg(c.fd, kMmioWrite, {});
        case kGetPhys: {
            std::vector<uint8_t> b;
            put64(b, dev_.mem().size());
            return send_msg(c.fd, kGetPhys, b, zs_hw_phys_fd(&dev_));
        }
        case kLedger: {
            // Drain the retained windows; "subscribe" / "unsubscribe" first
            // (docs/daemon.md §2, docs/oa.md §3.5).
            Ledger &led = dev_.gt().ledger();
            const std::string arg(reinterpret_cast<const char *>(p), len);
            if (arg == "subscribe") {
                if (ledger_sub_ && ledger_sub_ != &c)
                    return error("the ledger already has a subscriber");
                ledger_sub_ = &c;
                led.set_subscribed(true);
            } else if (arg == "unsubscribe") {
                if (ledger_sub_ != &c)
                    return error("this connection is not the ledger's subscriber");
                ledger_sub_ = nullptr;
                led.set_subscribed(false);
            } else if (!arg.empty()) {
                return error("LEDGER takes no payload, \"subscribe\" or \"unsubscribe\"");
            }
            Ledger::Batch b = led.drain();
            if (b.dropped)
                b.lines.insert(0, "{\"dropped\":" + std::to_string(b.dropped) + "}\n");
            return send_text(c.fd, kLedger, b.lines);
        }
        case kStimulus: {
            const std::string path(reinterpret_cast<const char *>(p), len);
            zk_stats_t st;
            zk_get_stats(kmd_, &st);
            if (st.files)
                return error("a stimulus drives the device directly: close every DRM file first");
            std::string result;
            try {
                StimulusOptions so;
                so.max_cycles = opt_.max_cycles;
                result = run_stimulus(dev_, top_, path, so);
            } catch (const std::exception &e) {
                zk_reclaim_engine(kmd_);
                return error(e.what());
            }
            zk_reclaim_engine(kmd_);
            return send_text(c.fd, kStimulus, result);
        }
        default:
            error("unknown request type " + std::to_string(type));
            return false;
        }
    }

    // Parse complete messages in the client's buffer; false to drop it.
    bool drain(Client &c)
    {
        while (c.in.size() >= 12) {
            const uint32_t magic = get32(c.in.data()), type = get32(c.in.data() + 4), len = get32(c.in.data() + 8);
            if (magic != kWireMagic) {
                send_text(c.fd, kError, "bad message magic: not a zesim client");
                return false;
            }
            if (len > kMaxPayload) {
                send_text(c.fd, kError, "message payload of " + std::to_string(len) + " bytes exceeds 1 MiB");
                return false;
            }
            if (c.in.size() < 12 + size_t(len))
                return true;
            std::vector<uint8_t> payload(c.in.begin() + 12, c.in.begin() + 12 + len);
            c.in.erase(c.in.begin(), c.in.begin() + 12 + len);
            if (!handle(c, type, payload.data(), len))
                return false;
        }
        return true;
    }

    void run(int lfd)
    {
        std::vector<std::unique_ptr<Client>> clients;
        while (!stop_ && !g_stop) {
            const bool pause = std::chrono::steady_clock::now() < listen_pause_;
            std::vector<pollfd> fds = {{pause ? -1 : lfd, POLLIN, 0}};
            for (auto &c : clients)
                fds.push_back({c->fd, POLLIN, 0});
            // Busy: serve what is ready, then advance time; idle: block.
            bool waiting = false;
            for (auto &c : clients)
                waiting |= !c->pending_wait.empty();
            // Busy: serve what is ready, then advance time; a fence wait on an
            // idle device is re-checked at a short interval; else block.
            // A job held by a semaphore only the host can release is not busy:
            // poll at a short interval rather than spin.
            const bool busy = dev_.busy();
            const int timeout = busy ? 0 : (!zk_idle(kmd_) || waiting || pause) ? 1 : 500;
            if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
                throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
            if (fds[0].revents & POLLIN) {
                const int cfd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
                if (cfd >= 0) {
                    // A client that stops reading its replies is dropped after a
                    // while instead of stalling everyone else.
                    timeval tv = {2, 0};
                    setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
                    auto cl = std::make_unique<Client>();
                    cl->fd = cfd;
                    clients.push_back(std::move(cl));
                } else if (errno == EMFILE || errno == ENFILE) {
                    if (!warned_fds_) {
                        std::fprintf(stderr, "zesim-gpu: out of file descriptors: new clients wait\n");
                        warned_fds_ = true;
                    }
                    listen_pause_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
                }
            }
            for (size_t i = 1; i < fds.size(); i++) {
                Client &c = *clients[i - 1];
                if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                uint8_t buf[65536];
                const ssize_t n = read(c.fd, buf, sizeof(buf));
                bool keep = n > 0;
                if (keep) {
                    c.in.insert(c.in.end(), buf, buf + n);
                    keep = drain(c);
                }
                if (!keep)
                    drop(c);
            }
            clients.erase(std::remove_if(clients.begin(), clients.end(),
                                         [](const std::unique_ptr<Client> &c) { return c->fd < 0; }),
                          clients.end());
            zk_service(kmd_);
            if (dev_.busy())
                top_.run_until_idle(opt_.quantum, true);  // held while the ledger's subscriber lags
            zk_service(kmd_);
            for (auto &c : clients)
                if (c->fd >= 0 && !check_wait(*c))
                    drop(*c);
            if (!dev_.busy() && zk_idle(kmd_))
                for (auto &c : clients)
                    if (c->fd >= 0 && c->waiting_idle) {
                        c->waiting_idle = false;
                        std::vector<uint8_t> b;
                        put64(b, dev_.gt().now());
                        if (!send_msg(c->fd, kWaitIdle, b))
                            drop(*c);
                    }
        }
        for (auto &c : clients)
            if (c->fd >= 0)
                drop(*c);
    }

    // A client is gone: its DRM file's work is cancelled and its objects freed.
    void drop(Client &c)
    {
        if (ledger_sub_ == &c) {
            ledger_sub_ = nullptr;
            dev_.gt().ledger().set_subscribed(false);
        }
        if (c.file)
            zk_close(c.file);
        c.file = nullptr;
        close(c.fd);
        c.fd = -1;
    }

private:
    Device &dev_;
    GtTop &top_;
    const ServerOptions &opt_;
    zk_kmd_t *kmd_ = nullptr;
    bool stop_ = false;
    bool warned_fds_ = false;
    const Client *ledger_sub_ = nullptr;  // the connection subscribed to the ledger
    std::chrono::steady_clock::time_point listen_pause_{};
};

}  // namespace

void serve(Device &dev, GtTop &top, const ServerOptions &opt)
{
    // Every GEM object holds a memfd here: allow as many as the system lets us.
    rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    const int lfd = listen_on(opt.socket_path);
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    const std::string timeout =
        opt.job_timeout_ms ? "job timeout " + std::to_string(opt.job_timeout_ms) + " ms" : "no job timeout";
    std::fprintf(stderr, "zesim-gpu: %s; %s; listening on %s%s\n", describe(dev.gt().config()).c_str(),
                 timeout.c_str(), opt.socket_path.c_str(), opt.test_channel ? " (test channel on)" : "");
    Server s(dev, top, opt);
    try {
        s.run(lfd);
    } catch (...) {
        close(lfd);
        unlink(opt.socket_path.c_str());
        throw;
    }
    close(lfd);
    unlink(opt.socket_path.c_str());
}

}  // namespace zesim
