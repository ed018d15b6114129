#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <stddef.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config.h"
#include "stimulus.h"
#include "fds.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"  // the table's C initializers
#include "uapi/zesim_ioctl_table.h"  // ZESIM_UPTR_MAX
#pragma GCC diagnostic pop
#include "zs/hw_if.h"
#include "zs/sip.h"

namespace zesim {

namespace {

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

struct Client {
    int fd = -1;
    std::vector<uint8_t> in;  // received, not yet handled: bytes [in_off, end)
    size_t in_off = 0;
    // Replies not yet sent: bytes [out_off, end).  out_pos is the position of
    // out[out_off] in the connection's byte stream; out_fds holds a dup of
    // every fd still to be sent, with the stream position of its message's
    // first byte, which is the byte the fd must travel with.
    std::vector<uint8_t> out;
    size_t out_off = 0;
    uint64_t out_pos = 0;
    std::deque<std::pair<uint64_t, int>> out_fds;
    // fds the program sent (SCM_RIGHTS) for its next ioctl that takes one
    // (PRIME_FD_TO_HANDLE, docs/uapi.md §12), oldest first; at most kMaxInFds.
    std::deque<int> in_fds;
    bool want_out = false;   // EPOLLOUT is armed
    bool eof = false;        // the peer closed; drop once its requests are handled
    bool runnable = false;   // on the run list: a complete request may be waiting
    bool in_waiters = false; // on the fence-wait list
    bool waiting_idle = false;
    int pid = 0;                        // as given at kOpen (log lines)
    zk_file_t *file = nullptr;          // after kOpen
    // A secondary fd's endpoint (docs/daemon.md §2.1) instead of a client
    // connection: the KMD fd object it serves, and whether an FD_READY is
    // on its way that no reply has overtaken yet.
    zk_fd_t *kfd = nullptr;
    bool ready_sent = false;
    std::vector<uint8_t> pending_wait;  // a WAIT_USER_FENCE argument still waiting
    std::chrono::steady_clock::time_point deadline;
    bool forever = false;
    size_t unsent() const { return out.size() - out_off; }
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

// One non-blocking sendmsg of `len` bytes, with `pass_fd` (if >= 0) attached
// to the first byte; returns bytes sent, or -1 with errno (EAGAIN: full).
ssize_t send_some(int fd, const uint8_t *p, size_t len, int pass_fd)
{
    struct iovec iov = {const_cast<uint8_t *>(p), len};
    struct msghdr mh = {};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    char ctrl[CMSG_SPACE(sizeof(int))] = {};
    if (pass_fd >= 0) {
        mh.msg_control = ctrl;
        mh.msg_controllen = sizeof(ctrl);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    for (;;) {
        const ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        return n;
    }
}

// A message whose header is complete: its total size, or 0 when more bytes
// are needed.  Bad headers count as complete (they are answered and dropped).
size_t message_size(const Client &c)
{
    const size_t avail = c.in.size() - c.in_off;
    if (avail < 12)
        return 0;
    const uint8_t *h = c.in.data() + c.in_off;
    const uint32_t magic = get32(h), len = get32(h + 8);
    if (magic != kWireMagic || len > kMaxPayload)
        return 12;
    return avail >= 12 + size_t(len) ? 12 + size_t(len) : 0;
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
constexpr uint32_t kMaxBlob = ZESIM_UPTR_MAX;  // a buffer the ioctl table allows (one chain: all its links)
// Fairness: requests handled per client per loop iteration, so a client that
// streams requests delays another client's request by at most this many.
constexpr int kRequestsPerTurn = 4;
constexpr size_t kReadChunk = 65536;
// Fds waiting in output buffers (a client not reading its MMAP replies): per
// client and in all; over either, the client is dropped.  Part of the reserve.
constexpr size_t kMaxQueuedFds = 16;
constexpr size_t kMaxQueuedFdsTotal = 64;
constexpr size_t kMaxInFds = 4;  // fds a program may send ahead of the ioctls that take them

class Server {
public:
    Server(Device &dev, GtTop &top, const ServerOptions &opt, uint64_t nofile)
        : dev_(dev), top_(top), opt_(opt), hello_(describe(dev.gt().config()))
    {
        kmd_ = zk_create(&dev_);
        if (!kmd_)
            throw std::runtime_error("cannot create the KMD");
        zk_set_job_timeout(kmd_, opt_.job_timeout_ms);
        zk_set_fault_mode(kmd_, opt_.fault_continue ? ZK_FAULT_CONTINUE : ZK_FAULT_FAIL);
        zk_set_timeslice(kmd_, opt_.timeslice_cycles);
        zk_set_test_channel(kmd_, opt_.test_channel);
        // The system routine of EU debug (firmware/sip.zeasm, docs/debug.md 2.5).
        if (zk_set_sip(kmd_, zs_sip_bin, zs_sip_size))
            throw std::runtime_error("the KMD refused the system routine");
        // The fd budget (docs/daemon.md §5): the reserve for the daemon itself
        // (and fds queued in output buffers), then connections, then memfds of
        // GEM objects; so neither clients nor objects can starve accept().
        const uint64_t spare = nofile > opt_.fd_reserve ? nofile - opt_.fd_reserve : 0;
        max_clients_ = opt_.max_clients ? std::min<uint64_t>(opt_.max_clients, spare) : spare / 2;
        zk_limits_t l;
        zk_get_limits(kmd_, &l);
        l.bos_total = uint32_t(std::min<uint64_t>(spare - max_clients_, UINT32_MAX));
        if (!l.bos_total)
            throw std::runtime_error("no file descriptors left for GEM objects: RLIMIT_NOFILE " +
                                     std::to_string(nofile) + ", fd reserve " + std::to_string(opt_.fd_reserve) +
                                     ", max clients " + std::to_string(max_clients_));
        // One file may use at most half of the GEM fd budget (but at least one).
        l.bos_per_file = std::max<uint32_t>(1, std::min<uint32_t>(opt_.max_objects_per_file ? opt_.max_objects_per_file
                                                                                            : UINT32_MAX,
                                                                  l.bos_total / 2));
        if (opt_.max_memory_per_file >= 0)
            l.bytes_per_file = uint64_t(opt_.max_memory_per_file);
        l.vms_per_file = opt_.max_vms_per_file;
        l.queues_per_file = opt_.max_queues_per_file;
        zk_set_limits(kmd_, &l);
        limits_ = l;
    }
    ~Server() { zk_destroy(kmd_); }

    const zk_limits_t &limits() const { return limits_; }
    uint64_t max_clients() const { return max_clients_; }

    // Queue one reply, optionally with a file descriptor.  It is sent at once
    // if the client's buffer is empty and its socket takes it; the rest waits
    // for EPOLLOUT.  Never blocks.  False when the client must be dropped: it
    // is gone, or it is over the limit of unread replies.  One reply alone may
    // exceed the limit (a large LEDGER): the limit catches a client that
    // keeps asking without reading.
    bool send_msg(Client &c, uint32_t type, const std::vector<uint8_t> &payload, int pass_fd = -1)
    {
        if (c.fd < 0)
            return false;
        std::vector<uint8_t> m;
        m.reserve(12 + payload.size());
        put32(m, kWireMagic);
        put32(m, type);
        put32(m, uint32_t(payload.size()));
        m.insert(m.end(), payload.begin(), payload.end());
        size_t off = 0;
        const size_t before = c.unsent();
        if (!before) {
            const ssize_t n = send_some(c.fd, m.data(), m.size(), pass_fd);
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                return false;
            if (n > 0) {
                off = size_t(n);
                c.out_pos += uint64_t(n);
                pass_fd = -1;  // it went with the first byte
            }
            if (off == m.size())
                return true;
        }
        if (pass_fd >= 0) {
            if (c.out_fds.size() >= kMaxQueuedFds || queued_fds_ >= kMaxQueuedFdsTotal) {
                std::fprintf(stderr, "zesim-gpu: client (pid %d) dropped: %zu file descriptors in replies it does not read\n",
                             c.pid, c.out_fds.size());
                return false;
            }
            const int d = fcntl(pass_fd, F_DUPFD_CLOEXEC, 0);
            if (d < 0)
                return false;
            c.out_fds.emplace_back(c.out_pos + c.unsent(), d);
            queued_fds_++;
        }
        c.out.insert(c.out.end(), m.begin() + long(off), m.end());
        if (opt_.max_output_bytes && before && c.unsent() > opt_.max_output_bytes) {
            std::fprintf(stderr,
                         "zesim-gpu: client (pid %d) dropped: %zu bytes of replies unread (limit %llu, --max-output)\n",
                         c.pid, c.unsent(), (unsigned long long)opt_.max_output_bytes);
            return false;
        }
        return watch(c, true);
    }

    bool send_text(Client &c, uint32_t type, const std::string &s)
    {
        return send_msg(c, type, std::vector<uint8_t>(s.begin(), s.end()));
    }

    // Send what the socket takes; false when the client must be dropped.
    bool flush(Client &c)
    {
        while (c.unsent()) {
            size_t len = c.unsent();
            int fd = -1;
            size_t next = 0;  // index in out_fds of the next fd not sent with this chunk
            if (!c.out_fds.empty() && c.out_fds.front().first == c.out_pos) {
                fd = c.out_fds.front().second;
                next = 1;
            }
            // A chunk ends before the next message that carries an fd.
            if (next < c.out_fds.size())
                len = std::min<uint64_t>(len, c.out_fds[next].first - c.out_pos);
            const ssize_t n = send_some(c.fd, c.out.data() + c.out_off, len, fd);
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    break;
                return false;
            }
            if (fd >= 0) {
                close(fd);
                c.out_fds.pop_front();
                queued_fds_--;
            }
            c.out_off += size_t(n);
            c.out_pos += uint64_t(n);
        }
        if (!c.unsent()) {
            c.out_off = 0;
            c.out.clear();
            if (c.out.capacity() > (1u << 20))
                std::vector<uint8_t>().swap(c.out);  // give a burst's memory back
        } else if (c.out_off > (1u << 20) && c.out_off * 2 > c.out.size()) {
            c.out.erase(c.out.begin(), c.out.begin() + long(c.out_off));
            c.out_off = 0;
        }
        return watch(c, c.unsent() != 0);
    }

    // Arm or disarm EPOLLOUT for a client (EPOLLIN stays until end of file).
    bool watch(Client &c, bool out)
    {
        if (out == c.want_out || c.eof)
            return true;
        epoll_event ev = {};
        ev.events = uint32_t(EPOLLIN) | (out ? uint32_t(EPOLLOUT) : 0u);
        ev.data.ptr = &c;
        if (epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev) != 0)
            return false;
        c.want_out = out;
        return true;
    }

    bool ioctl_reply(Client &c, int ret, const std::vector<uint8_t> &arg, const std::vector<std::vector<uint8_t>> &outs,
                     uint32_t type = kIoctl, int pass_fd = -1)
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
        return send_msg(c, type, b, pass_fd);
    }

    // A new secondary fd (docs/daemon.md §2.1): a socketpair whose one end
    // joins the epoll set as the fd's endpoint and whose other end goes to
    // the program with the reply.  The program's end, or -errno (the KMD
    // object is then closed).
    int make_endpoint(zk_fd_t *kfd, int pid)
    {
        int sv[2] = {-1, -1};
        if (clients_.size() >= max_clients_ || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            const int err = clients_.size() >= max_clients_ ? EMFILE : errno;
            zk_fd_close(kfd);
            return -err;
        }
        fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
        // Named, so that the preload library knows the fd when a program
        // passes it to another process (SCM_RIGHTS); unnamed if bind fails.
        sockaddr_un a = {};
        a.sun_family = AF_UNIX;
        const int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, ZESIM_WIRE_FD_NAME "%d/%u", int(getpid()),
                               zk_fd_id(kfd));
        bind(sv[0], reinterpret_cast<sockaddr *>(&a), socklen_t(offsetof(sockaddr_un, sun_path) + 1 + size_t(n)));
        auto cl = std::make_unique<Client>();
        cl->fd = sv[0];
        cl->kfd = kfd;
        cl->pid = pid;
        epoll_event ev = {};
        ev.events = EPOLLIN;
        ev.data.ptr = cl.get();
        if (epoll_ctl(ep_, EPOLL_CTL_ADD, sv[0], &ev) != 0) {
            const int err = errno;
            close(sv[0]);
            close(sv[1]);
            zk_fd_close(kfd);
            return -err;
        }
        zk_fd_attach(kfd, cl.get());
        Client *p = cl.get();
        clients_.emplace(p, std::move(cl));
        return sv[1];
    }

    // Readiness changes of secondary fds (zk_fd_notify, a hang-up at
    // zk_close, a new endpoint): an FD_READY when one became readable, the
    // endpoint closed when its owner is gone (the program sees POLLHUP).
    void fd_events()
    {
        while (zk_fd_t *kfd = zk_fd_next_event(kmd_)) {
            Client *c = static_cast<Client *>(zk_fd_user(kfd));
            if (!c || c->fd < 0)
                continue;
            const unsigned ev = zk_fd_poll(kfd);
            if (ev & ZK_POLLHUP) {
                // Replies already queued still go out if the socket takes them.
                flush(*c);
                drop(*c);
            } else if ((ev & ZK_POLLIN) && !c->ready_sent) {
                c->ready_sent = true;
                if (!send_msg(*c, kFdReady, {}))
                    drop(*c);
            }
        }
    }

    // A request on a secondary fd's socket (docs/daemon.md §2.1).
    bool handle_fd(Client &c, uint32_t type, const uint8_t *p, uint32_t len)
    {
        const bool keep = fd_request(c, type, p, len);
        // The program reads every FD_READY before this reply: another goes
        // after it while the fd stays readable (fd_events).
        c.ready_sent = false;
        if (c.kfd)
            zk_fd_notify(c.kfd);
        return keep;
    }

    bool fd_request(Client &c, uint32_t type, const uint8_t *p, uint32_t len)
    {
        auto error = [&](const std::string &why) { return send_text(c, kError, why); };
        std::vector<uint8_t> b;
        bool ok;
        switch (type) {
        case kFdRead: {
            if (len != 4)
                return error("FD_READ takes a 4-byte length");
            const uint32_t n = std::min(get32(p), ZESIM_WIRE_MAX_FD_IO);
            b.resize(4 + n);
            const long r = zk_fd_read(c.kfd, b.data() + 4, n);
            b.resize(4 + (r > 0 ? size_t(r) : 0));
            const uint32_t rv = uint32_t(int32_t(r));
            std::memcpy(b.data(), &rv, 4);
            ok = send_msg(c, kFdRead, b);
            break;
        }
        case kFdPread: {
            if (len != 12)
                return error("FD_PREAD takes an 8-byte offset and a 4-byte length");
            const uint64_t off = uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32;
            const uint32_t n = std::min(get32(p + 8), ZESIM_WIRE_MAX_FD_IO);
            b.resize(4 + n);
            const long r = zk_fd_pread(c.kfd, b.data() + 4, n, off);
            b.resize(4 + (r > 0 ? size_t(r) : 0));
            const uint32_t rv = uint32_t(int32_t(r));
            std::memcpy(b.data(), &rv, 4);
            ok = send_msg(c, kFdPread, b);
            break;
        }
        case kFdPwrite: {
            if (len < 8 || len - 8 > ZESIM_WIRE_MAX_FD_IO)
                return error("FD_PWRITE takes an 8-byte offset and at most 256 KiB");
            const uint64_t off = uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32;
            put32(b, uint32_t(int32_t(zk_fd_pwrite(c.kfd, p + 8, len - 8, off))));
            ok = send_msg(c, kFdPwrite, b);
            break;
        }
        case kFdIoctl:
            ok = do_ioctl(c, p, len);
            break;
        case kFdPoll:
            if (len)
                return error("FD_POLL takes no payload");
            put32(b, zk_fd_poll(c.kfd));
            ok = send_msg(c, kFdPoll, b);
            break;
        default:
            error("request type " + std::to_string(type) + " is not one of a secondary fd");
            return false;
        }
        return ok;
    }

    // kIoctl (or kFdIoctl on a secondary fd): unmarshal, run the KMD,
    // marshal the reply (docs/uapi.md §12), with the fd the ioctl made.
    bool do_ioctl(Client &c, const uint8_t *p, uint32_t len)
    {
        const uint32_t type = c.kfd ? kFdIoctl : kIoctl;
        Reader r(p, len);
        uint32_t cmd, arg_size, nin, nout;
        const uint8_t *arg;
        if (!r.u32(cmd) || !r.u32(arg_size) || arg_size > kMaxIoctlArg || !(arg = r.bytes(arg_size)) || !r.u32(nin) ||
            !r.u32(nout) || nin > ZK_MAX_BLOBS || nout > ZK_MAX_BLOBS)
            return send_text(c, kError, "malformed ioctl request");
        zk_blob_t in[ZK_MAX_BLOBS];
        for (uint32_t i = 0; i < nin; i++) {
            uint32_t n;
            if (!r.u32(n) || n > kMaxBlob || !(in[i].data = r.bytes(n)))
                return send_text(c, kError, "malformed ioctl request");
            in[i].len = n;
        }
        std::vector<std::vector<uint8_t>> outs(nout);
        zk_out_blob_t out[ZK_MAX_BLOBS];
        for (uint32_t i = 0; i < nout; i++) {
            uint32_t n;
            if (!r.u32(n) || n > kMaxBlob)
                return send_text(c, kError, "malformed ioctl request");
            outs[i].assign(n, 0);
            out[i] = {outs[i].data(), n};
        }
        if (!r.done())
            return send_text(c, kError, "malformed ioctl request");
        std::vector<uint8_t> a(arg, arg + arg_size);
        // An ioctl that takes an fd (docs/uapi.md §12) gets the one the
        // program sent with it, as an fd of this process; the program's own
        // number goes back in the reply.
        const zesim_ioctl_desc *desc = c.kfd ? nullptr : zesim_ioctl_find(cmd);
        const uint32_t fd_flags = desc && arg_size == desc->arg_size ? desc->fd_flags : 0;
        int32_t user_fd = -1, in_fd = -1;
        if (fd_flags & ZESIM_IOCTL_FD_IN) {
            std::memcpy(&user_fd, a.data() + desc->fd_field, 4);
            if (!c.in_fds.empty()) {
                in_fd = c.in_fds.front();
                c.in_fds.pop_front();
            }
            std::memcpy(a.data() + desc->fd_field, &in_fd, 4);
        }
        int ret = c.kfd ? zk_fd_ioctl(c.kfd, cmd, a.data(), arg_size, in, nin, out, nout)
                        : zk_ioctl(c.file, cmd, a.data(), arg_size, in, nin, out, nout);
        for (uint32_t i = 0; i < nout; i++)
            outs[i].resize(out[i].len);  // the bytes the KMD wrote
        int pass_fd = -1;
        if (fd_flags & ZESIM_IOCTL_FD_IN) {
            if (in_fd >= 0)
                close(in_fd);
            std::memcpy(a.data() + desc->fd_field, &user_fd, 4);
        }
        if (const int pf = zk_prime_take_fd(kmd_); pf >= 0 && ret == 0 && (fd_flags & ZESIM_IOCTL_FD_OUT)) {
            pass_fd = fcntl(pf, F_DUPFD_CLOEXEC, 0);
            if (pass_fd < 0)
                ret = -EMFILE;
        }
        if (zk_fd_t *nf = zk_fd_take_new(kmd_)) {
            if (ret == 0) {
                ret = make_endpoint(nf, c.pid);
                if (ret >= 0) {
                    pass_fd = ret;
                    ret = 0;
                }
            } else {
                zk_fd_close(nf);  // not given out
            }
        }
        zk_service(kmd_);
        if (ret == ZK_PENDING && c.kfd)
            ret = -EINVAL;  // fd ioctls do not wait in the daemon
        if (ret == ZK_PENDING) {
            const auto *w = reinterpret_cast<const drm_zesim_wait_user_fence *>(a.data());
            c.pending_wait = a;
            // Timeouts beyond a year are forever (and cannot overflow the clock).
            c.forever = w->timeout < 0 || w->timeout > 365ll * 24 * 3600 * 1000000000ll;
            c.deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(c.forever ? 0 : w->timeout);
            if (!c.in_waiters) {
                c.in_waiters = true;
                waiters_.push_back(&c);
            }
            return true;
        }
        const bool ok = ioctl_reply(c, ret, a, outs, type, pass_fd);
        if (pass_fd >= 0)
            close(pass_fd);  // sent, or dup'ed into the output buffer
        return ok;
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
        auto error = [&](const std::string &why) { return send_text(c, kError, why); };
        if (c.kfd)
            return handle_fd(c, type, p, len);
        if (type >= kFdRead && type <= kFdReady)
            return error("request type " + std::to_string(type) + " is for a secondary fd's socket");
        const bool test_only = (type >= kMmioRead && type <= kDebugSnapshots) || type == kShutdown;
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
            b.insert(b.end(), hello_.begin(), hello_.end());
            return send_msg(c, kHello, b);
        }
        case kShutdown:
            stop_ = true;
            return send_msg(c, kShutdown, {});
        case kWaitIdle:
            if (!c.waiting_idle) {
                c.waiting_idle = true;
                idle_waiters_.push_back(&c);
            }
            return true;
        case kOpen:
            if ((len != 4 && len != 8) || c.file)
                return error(c.file ? "this connection already has a DRM file"
                                    : "OPEN takes a 4-byte pid and optionally a 4-byte job timeout in ms");
            c.pid = int(get32(p));
            {
                // The kernel's word for who the peer is (EU debug connects by pid and
                // checks ptrace rights of that process, docs/kmd.md §14).
                struct ucred cr = {};
                socklen_t cl = sizeof(cr);
                if (getsockopt(c.fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 && cr.pid > 0)
                    c.pid = int(cr.pid);
            }
            c.file = zk_open(kmd_, c.pid);
            if (!c.file)
                return error("out of memory");
            if (len == 8)
                zk_set_file_job_timeout(c.file, get32(p + 4));
            return send_msg(c, kOpen, {});
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
            return send_msg(c, kMmap, b, ret == 0 ? memfd : -1);
        }
        case kKmdStats: {
            zk_stats_t st;
            zk_get_stats(kmd_, &st);
            char buf[1024];
            snprintf(buf, sizeof(buf),
                     "{\"files\":%u,\"bos\":%u,\"vms\":%u,\"queues\":%u,\"jobs\":%u,\"bo_bytes\":%llu,"
                     "\"pt_bytes\":%llu,\"free_bytes\":%llu,\"jobs_completed\":%llu,\"jobs_cancelled\":%llu,"
                     "\"engine_resets\":%llu,\"preemptions\":%llu,\"jobs_timed_out\":%llu,\"timeslices\":%llu,\"jobs_faulted\":%llu,"
                     "\"eu_faults\":%llu,\"fds\":%u,\"oa_configs\":%u,\"oa_streams\":%u,\"oa_reports_read\":%llu,"
                     "\"oa_irqs\":%llu,\"debug_connections\":%u,\"debug_events\":%llu,\"debug_irqs\":%llu,"
                     "\"debug_resumes\":%llu}",
                     st.files, st.bos, st.vms, st.queues, st.jobs, (unsigned long long)st.bo_bytes,
                     (unsigned long long)st.pt_bytes, (unsigned long long)st.free_bytes,
                     (unsigned long long)st.jobs_completed, (unsigned long long)st.jobs_cancelled,
                     (unsigned long long)st.engine_resets, (unsigned long long)st.preemptions,
                     (unsigned long long)st.jobs_timed_out, (unsigned long long)st.timeslices,
                     (unsigned long long)st.jobs_faulted,
                     (unsigned long long)st.eu_faults, zk_fd_count(kmd_), st.oa_configs, st.oa_streams,
                     (unsigned long long)st.oa_reports_read, (unsigned long long)st.oa_irqs, st.debug_connections,
                     (unsigned long long)st.debug_events, (unsigned long long)st.debug_irqs,
                     (unsigned long long)st.debug_resumes);
            return send_text(c, kKmdStats, buf);
        }
        case kMmioRead: {
            if (len != 4)
                return error("MMIO_READ takes a 4-byte offset");
            std::vector<uint8_t> b;
            put32(b, zs_hw_mmio_read(&dev_, get32(p)));
            return send_msg(c, kMmioRead, b);
        }
        case kMmioWrite:
            if (len != 8)
                return error("MMIO_WRITE takes offset and value (8 bytes)");
            zs_hw_mmio_write(&dev_, get32(p), get32(p + 4));
            return send_msg(c, kMmioWrite, {});
        case kGetPhys: {
            std::vector<uint8_t> b;
            put64(b, dev_.mem().size());
            return send_msg(c, kGetPhys, b, zs_hw_phys_fd(&dev_));
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
            return send_text(c, kLedger, b.lines);
        }
        case kDebugSnapshots: {
            // The ground truth of the debug tests (docs/debug.md section 2.6): the
            // snapshots taken since the last request, oldest first, then forgotten.
            std::string lines;
            for (const DebugSnapshot &s : dev_.gt().ledger().take_debug_snapshots())
                lines += s.json() + "\n";
            return send_text(c, kDebugSnapshots, lines);
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
            return send_text(c, kStimulus, result);
        }
        default:
            error("unknown request type " + std::to_string(type));
            return false;
        }
    }

    // Handle up to `budget` complete messages of the client's input; false
    // to drop it.
    bool drain(Client &c, int budget)
    {
        size_t size;
        while (budget-- > 0 && c.fd >= 0 && (size = message_size(c))) {
            const uint8_t *h = c.in.data() + c.in_off;
            const uint32_t magic = get32(h), type = get32(h + 4), len = get32(h + 8);
            if (magic != kWireMagic) {
                send_text(c, kError, "bad message magic: not a zesim client");
                return false;
            }
            if (len > kMaxPayload) {
                send_text(c, kError, "message payload of " + std::to_string(len) + " bytes exceeds 1 MiB");
                return false;
            }
            // The payload stays in place while it is handled: nothing appends to c.in.
            const bool keep = handle(c, type, h + 12, len);
            c.in_off += size;
            if (!keep)
                return false;
        }
        if (c.in_off == c.in.size()) {
            c.in.clear();
            c.in_off = 0;
        } else if (c.in_off >= kReadChunk) {
            c.in.erase(c.in.begin(), c.in.begin() + long(c.in_off));
            c.in_off = 0;
        }
        return true;
    }

    // Read what the socket has (one chunk).  End of file or an error: stop
    // watching the socket; the client is dropped once its requests are handled.
    void read_some(Client &c)
    {
        uint8_t buf[kReadChunk];
        ssize_t n;
        struct iovec iov = {buf, sizeof(buf)};
        char ctrl[CMSG_SPACE(sizeof(int) * 4)];
        struct msghdr mh = {};
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = ctrl;
        mh.msg_controllen = sizeof(ctrl);
        do
            n = recvmsg(c.fd, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n > 0)
            for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h)) {
                if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
                    continue;
                const size_t nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < nfd; i++) {
                    int f;
                    std::memcpy(&f, CMSG_DATA(h) + i * sizeof(int), sizeof(int));
                    if (c.in_fds.size() < kMaxInFds && !c.kfd)
                        c.in_fds.push_back(f);
                    else
                        close(f);  // more than an ioctl can use: dropped
                }
            }
        if (n > 0) {
            c.in.insert(c.in.end(), buf, buf + n);
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            c.eof = true;
            epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
        }
    }

    void accept_clients(int lfd)
    {
        for (int i = 0; i < 64; i++) {
            const int cfd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE) {
                    if (!warned_fds_) {
                        std::fprintf(stderr, "zesim-gpu: out of file descriptors: new clients wait\n");
                        warned_fds_ = true;
                    }
                    // Stop watching the listening socket for a while (it stays ready).
                    epoll_ctl(ep_, EPOLL_CTL_DEL, lfd, nullptr);
                    listen_paused_ = true;
                    listen_pause_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
                }
                return;  // EAGAIN: no more; ECONNABORTED etc.: next time
            }
            if (clients_.size() >= max_clients_) {
                if (!warned_clients_) {
                    std::fprintf(stderr, "zesim-gpu: %zu clients connected (the limit): new connections are closed\n",
                                 clients_.size());
                    warned_clients_ = true;
                }
                close(cfd);
                continue;
            }
            auto cl = std::make_unique<Client>();
            cl->fd = cfd;
            epoll_event ev = {};
            ev.events = EPOLLIN;
            ev.data.ptr = cl.get();
            if (epoll_ctl(ep_, EPOLL_CTL_ADD, cfd, &ev) != 0) {
                close(cfd);
                continue;
            }
            Client *p = cl.get();
            clients_.emplace(p, std::move(cl));
        }
    }

    // While idle with periodic OA reports, simulated time follows host time
    // (docs/oa.md §4.5) so that a stream gets reports between kernels, as on silicon.
    void pass_idle_time()
    {
        const auto now = std::chrono::steady_clock::now();
        const bool on = opt_.idle_time_ratio > 0 && dev_.oa_block().periodic() && !dev_.busy() &&
                        !dev_.gt().ledger().full();
        if (!on || !idle_clock_valid_) {
            idle_clock_ = now;
            idle_clock_valid_ = on;
            return;
        }
        // At most 100 ms of host time at once (a stalled loop does not make a burst).
        const double ns = std::min<double>(1e8, std::chrono::duration<double, std::nano>(now - idle_clock_).count());
        const uint64_t cycles = uint64_t(ns * opt_.idle_time_ratio * dev_.gt().config().core_mhz / 1000.0);
        if (!cycles)
            return;
        idle_clock_ = now;
        top_.pass_idle(cycles);
    }

    void run(int lfd)
    {
        ep_ = epoll_create1(EPOLL_CLOEXEC);
        if (ep_ < 0)
            throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
        fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
        epoll_event lev = {};
        lev.events = EPOLLIN;
        lev.data.ptr = nullptr;  // the listening socket
        if (epoll_ctl(ep_, EPOLL_CTL_ADD, lfd, &lev) != 0)
            throw std::runtime_error(std::string("epoll_ctl: ") + std::strerror(errno));
        std::vector<epoll_event> evs(256);
        std::vector<Client *> turn;
        while (!stop_ && !g_stop) {
            if (listen_paused_ && std::chrono::steady_clock::now() >= listen_pause_) {
                listen_paused_ = epoll_ctl(ep_, EPOLL_CTL_ADD, lfd, &lev) != 0;
                if (listen_paused_)
                    listen_pause_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
            }
            // Busy or requests already read: serve what is ready, then advance
            // time; a fence wait on an idle device is re-checked at a short
            // interval; else block.  A job held by a semaphore only the host
            // can release is not busy: poll at a short interval rather than spin.
            const bool busy = dev_.busy() || !runnable_.empty();
            const bool idle_time = opt_.idle_time_ratio > 0 && dev_.oa_block().periodic();
            const int timeout =
                busy ? 0 : (!zk_idle(kmd_) || !waiters_.empty() || listen_paused_ || idle_time) ? 1 : 500;
            int n = epoll_wait(ep_, evs.data(), int(evs.size()), timeout);
            if (n < 0) {
                if (errno != EINTR)
                    throw std::runtime_error(std::string("epoll_wait: ") + std::strerror(errno));
                n = 0;
            }
            for (int i = 0; i < n; i++) {
                Client *c = static_cast<Client *>(evs[size_t(i)].data.ptr);
                if (!c) {
                    accept_clients(lfd);
                    continue;
                }
                if (c->fd < 0)
                    continue;
                const uint32_t e = evs[size_t(i)].events;
                if ((e & EPOLLOUT) && !flush(*c)) {
                    drop(*c);
                    continue;
                }
                // Read only when what was read before is handled: the input
                // buffer stays within one request + one chunk.
                if ((e & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->eof && !message_size(*c))
                    read_some(*c);
                make_runnable(*c);
            }
            // One turn for each client with input: at most kRequestsPerTurn requests.
            turn.swap(runnable_);
            for (Client *c : turn) {
                c->runnable = false;
                if (c->fd < 0)
                    continue;
                if (!drain(*c, kRequestsPerTurn)) {
                    drop(*c);
                    continue;
                }
                if (c->fd >= 0 && message_size(*c))
                    make_runnable(*c);
                else if (c->eof)
                    drop(*c);
            }
            turn.clear();
            zk_service(kmd_);
            fd_events();
            if (dev_.busy()) {
                idle_clock_valid_ = false;  // busy time is simulated, not passed
                top_.run_until_idle(opt_.quantum, true);  // held while the ledger's subscriber lags
            } else {
                pass_idle_time();
            }
            zk_service(kmd_);
            fd_events();
            for (size_t i = 0; i < waiters_.size(); i++) {
                Client *c = waiters_[i];
                if (c->fd >= 0 && !check_wait(*c))
                    drop(*c);
                if (c->fd < 0 || c->pending_wait.empty()) {
                    c->in_waiters = false;
                    waiters_[i--] = waiters_.back();
                    waiters_.pop_back();
                }
            }
            if (!idle_waiters_.empty() && !dev_.busy() && zk_idle(kmd_)) {
                std::vector<Client *> w;
                w.swap(idle_waiters_);
                for (Client *c : w) {
                    if (c->fd < 0 || !c->waiting_idle)
                        continue;
                    c->waiting_idle = false;
                    std::vector<uint8_t> b;
                    put64(b, dev_.gt().now());
                    if (!send_msg(*c, kWaitIdle, b))
                        drop(*c);
                }
            }
            fd_events();  // owners dropped in this iteration: hang up their fds
            reap();
        }
        // Stopping: what the sockets take of pending replies (SHUTDOWN's) goes out.
        for (auto &kv : clients_)
            if (kv.first->fd >= 0) {
                flush(*kv.first);
                drop(*kv.first);
            }
        while (zk_fd_next_event(kmd_)) {
        }
        reap();
        close(ep_);
        ep_ = -1;
    }

    void make_runnable(Client &c)
    {
        if (!c.runnable && c.fd >= 0) {
            c.runnable = true;
            runnable_.push_back(&c);
        }
    }

    // A client is gone: its DRM file's work is cancelled and its objects
    // freed.  The Client itself is freed by reap(), at the end of the loop
    // iteration, when no list refers to it any more.
    void drop(Client &c)
    {
        if (c.fd < 0)
            return;
        if (ledger_sub_ == &c) {
            ledger_sub_ = nullptr;
            dev_.gt().ledger().set_subscribed(false);
        }
        if (c.file)
            zk_close(c.file);  // hangs up its secondary fds: fd_events closes their endpoints
        c.file = nullptr;
        if (c.kfd)
            zk_fd_close(c.kfd);
        c.kfd = nullptr;
        c.pending_wait.clear();
        for (auto &f : c.out_fds)
            close(f.second);
        for (int f : c.in_fds)
            close(f);
        c.in_fds.clear();
        queued_fds_ -= c.out_fds.size();
        c.out_fds.clear();
        std::vector<uint8_t>().swap(c.out);
        std::vector<uint8_t>().swap(c.in);
        close(c.fd);  // also removes it from the epoll set
        c.fd = -1;
        dead_.push_back(&c);
    }

    void reap()
    {
        if (dead_.empty())
            return;
        auto gone = [](Client *c) { return c->fd < 0; };
        runnable_.erase(std::remove_if(runnable_.begin(), runnable_.end(), gone), runnable_.end());
        waiters_.erase(std::remove_if(waiters_.begin(), waiters_.end(), gone), waiters_.end());
        idle_waiters_.erase(std::remove_if(idle_waiters_.begin(), idle_waiters_.end(), gone), idle_waiters_.end());
        for (Client *c : dead_)
            clients_.erase(c);
        dead_.clear();
    }

private:
    Device &dev_;
    GtTop &top_;
    const ServerOptions &opt_;
    const std::string hello_;  // the device description, for HELLO
    zk_kmd_t *kmd_ = nullptr;
    zk_limits_t limits_ = {};
    uint64_t max_clients_ = 0;
    int ep_ = -1;
    bool stop_ = false;
    std::chrono::steady_clock::time_point idle_clock_{};
    bool idle_clock_valid_ = false;
    bool warned_fds_ = false, warned_clients_ = false;
    bool listen_paused_ = false;
    const Client *ledger_sub_ = nullptr;  // the connection subscribed to the ledger
    std::chrono::steady_clock::time_point listen_pause_{};
    std::unordered_map<Client *, std::unique_ptr<Client>> clients_;
    std::vector<Client *> runnable_;      // clients with input to handle
    std::vector<Client *> waiters_;       // clients with a pending WAIT_USER_FENCE
    std::vector<Client *> idle_waiters_;  // clients waiting for WAIT_IDLE
    std::vector<Client *> dead_;          // dropped, freed by reap()
    size_t queued_fds_ = 0;               // dup'ed fds in all output buffers
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
    const uint64_t nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? rl.rlim_cur : 1u << 20;
    const int lfd = listen_on(opt.socket_path);
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    const std::string timeout =
        opt.job_timeout_ms ? "job timeout " + std::to_string(opt.job_timeout_ms) + " ms" : "no job timeout";
    std::unique_ptr<Server> sp;
    try {
        sp = std::make_unique<Server>(dev, top, opt, nofile);
    } catch (...) {
        close(lfd);
        unlink(opt.socket_path.c_str());
        throw;
    }
    Server &s = *sp;
    // One start-up line (./zesim run tells it from later messages).
    const zk_limits_t &l = s.limits();
    std::fprintf(stderr,
                 "zesim-gpu: %s; %s; listening on %s%s; limits: %llu clients, %u GEM objects in all; per client "
                 "%u objects, %llu MiB, %u VMs, %u exec queues, %llu MiB of unread replies (0 = no limit)\n",
                 describe(dev.gt().config()).c_str(), timeout.c_str(), opt.socket_path.c_str(),
                 opt.test_channel ? " (test channel on)" : "", (unsigned long long)s.max_clients(), l.bos_total,
                 l.bos_per_file, (unsigned long long)(l.bytes_per_file >> 20), l.vms_per_file, l.queues_per_file,
                 (unsigned long long)(opt.max_output_bytes >> 20));
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
