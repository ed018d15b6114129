// Functional execution of ZE-ISA instructions (docs/isa.md §2-§3, §7).
#include "thread.h"

#include <cmath>
#include <cstring>

namespace zesim {

namespace {

uint32_t f2u(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float u2f(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

constexpr uint32_t kCanonicalNan = 0x7fc00000u;

uint32_t *arf_storage(ThreadState &t, unsigned num)
{
    switch (num) {
    case ZE_ARF_IP: return &t.ip;
    case ZE_ARF_F0: return &t.f[0];
    case ZE_ARF_F1: return &t.f[1];
    case ZE_ARF_A0: return t.a0;
    case ZE_ARF_ACC0: return t.acc[0];
    case ZE_ARF_ACC1: return t.acc[1];
    case ZE_ARF_SR0: return t.sr0;
    case ZE_ARF_CR0: return t.cr0;
    case ZE_ARF_CE: return &t.ce;
    case ZE_ARF_TDR: return t.tdr;
    case ZE_ARF_DBG0: return t.dbg0;
    default: return nullptr;
    }
}

uint32_t read_arf(ThreadState &t, unsigned num, unsigned sub)
{
    if (num == ZE_ARF_TM0)
        return sub ? uint32_t(t.cycle >> 32) : uint32_t(t.cycle);
    uint32_t *p = arf_storage(t, num);
    return p ? p[sub] : 0;
}

uint32_t apply_mods(uint32_t v, const ze_operand_t &o, unsigned type)
{
    if (!o.neg && !o.abs)
        return v;
    if (type == ZE_TYPE_F) {
        if (o.abs)
            v &= 0x7fffffffu;
        if (o.neg)
            v ^= 0x80000000u;
        return v;
    }
    if (o.abs && type == ZE_TYPE_D && int32_t(v) < 0)
        v = 0u - v;
    if (o.neg)
        v = 0u - v;
    return v;
}

// Source value of lane `lane` (modifiers applied).
uint32_t src_value(ThreadState &t, const ze_inst_t &in, const ze_operand_t &o, unsigned lane)
{
    uint32_t v;
    switch (o.kind) {
    case ZE_OPND_GRFV: v = t.grf[(o.reg + lane / 8) & 127][lane % 8]; break;
    case ZE_OPND_GRFS: v = t.grf[o.reg][o.sub]; break;
    case ZE_OPND_ARF: v = read_arf(t, o.reg, o.sub); break;
    case ZE_OPND_IMM: return in.dw3;
    default: return 0;
    }
    return apply_mods(v, o, in.stype);
}

uint32_t f_to_int(uint32_t bits, bool is_signed)
{
    float f = u2f(bits);
    if (std::isnan(f))
        return 0;
    double d = std::trunc(double(f));
    if (is_signed) {
        if (d <= -2147483648.0)
            return 0x80000000u;
        if (d >= 2147483647.0)
            return 0x7fffffffu;
        return uint32_t(int32_t(d));
    }
    if (d <= 0.0)
        return 0;
    if (d >= 4294967295.0)
        return 0xffffffffu;
    return uint32_t(d);
}

uint32_t convert(uint32_t v, unsigned from, unsigned to)
{
    if (to == ZE_TYPE_F) {
        if (from == ZE_TYPE_F)
            return std::isnan(u2f(v)) ? kCanonicalNan : v;
        float f = from == ZE_TYPE_D ? float(int32_t(v)) : float(v);
        return f2u(f);
    }
    if (from == ZE_TYPE_F)
        return f_to_int(v, to == ZE_TYPE_D);
    return v;
}

void write_dst(ThreadState &t, const ze_inst_t &in, unsigned lane, uint32_t v)
{
    const ze_operand_t &o = in.dst;
    switch (o.kind) {
    case ZE_OPND_GRFV: t.grf[(o.reg + lane / 8) & 127][lane % 8] = v; break;
    case ZE_OPND_GRFS: t.grf[o.reg][o.sub] = v; break;
    case ZE_OPND_ARF:
        if (uint32_t *p = arf_storage(t, o.reg))
            p[o.sub] = v;
        break;
    default: break;
    }
}

float fmin_spec(float a, float b)
{
    if (std::isnan(a))
        return b;
    if (std::isnan(b))
        return a;
    if (a == b)  // -0 < +0
        return std::signbit(a) ? a : b;
    return a < b ? a : b;
}

float fmax_spec(float a, float b)
{
    if (std::isnan(a))
        return b;
    if (std::isnan(b))
        return a;
    if (a == b)
        return std::signbit(a) ? b : a;
    return a > b ? a : b;
}

template <typename T>
bool compare(unsigned cmod, T a, T b)
{
    switch (cmod) {
    case ZE_CMOD_EQ: return a == b;
    case ZE_CMOD_NE: return !(a == b);
    case ZE_CMOD_LT: return a < b;
    case ZE_CMOD_LE: return a <= b;
    case ZE_CMOD_GT: return a > b;
    case ZE_CMOD_GE: return a >= b;
    default: return false;
    }
}

// The operation itself, in the source type; returns raw bits in that type.
uint32_t alu(const ze_inst_t &in, uint32_t a, uint32_t b, uint32_t c)
{
    const unsigned ty = in.stype;
    const bool fl = ty == ZE_TYPE_F;
    switch (in.opcode) {
    case ZE_OP_MOV: return a;
    case ZE_OP_NOT: return ~a;
    case ZE_OP_AND: return a & b;
    case ZE_OP_OR: return a | b;
    case ZE_OP_XOR: return a ^ b;
    case ZE_OP_SHL: return a << (b & 31);
    case ZE_OP_SHR: return a >> (b & 31);
    case ZE_OP_ASR: return uint32_t(int32_t(a) >> (b & 31));
    case ZE_OP_ADD: return fl ? f2u(u2f(a) + u2f(b)) : a + b;
    case ZE_OP_MUL: return fl ? f2u(u2f(a) * u2f(b)) : a * b;
    case ZE_OP_MAD: return fl ? f2u(std::fmaf(u2f(a), u2f(b), u2f(c))) : a * b + c;
    case ZE_OP_MIN:
        if (fl)
            return f2u(fmin_spec(u2f(a), u2f(b)));
        if (ty == ZE_TYPE_D)
            return int32_t(a) < int32_t(b) ? a : b;
        return a < b ? a : b;
    case ZE_OP_MAX:
        if (fl)
            return f2u(fmax_spec(u2f(a), u2f(b)));
        if (ty == ZE_TYPE_D)
            return int32_t(a) > int32_t(b) ? a : b;
        return a > b ? a : b;
    case ZE_OP_INV: return f2u(1.0f / u2f(a));
    case ZE_OP_SQRT: return f2u(std::sqrt(u2f(a)));
    case ZE_OP_EXP: return f2u(float(std::exp2(double(u2f(a)))));
    case ZE_OP_LOG: return f2u(float(std::log2(double(u2f(a)))));
    default: return 0;
    }
}

// Tight lane loops for the common integer operations (same source and
// destination type); false when the opcode has no fast path.
bool alu_int_lanes(unsigned opcode, const uint32_t (*s)[ZE_MAX_SIMD], uint32_t *r, unsigned n)
{
    const uint32_t *a = s[0], *b = s[1], *c = s[2];
    switch (opcode) {
    case ZE_OP_MOV: for (unsigned i = 0; i < n; i++) r[i] = a[i]; return true;
    case ZE_OP_ADD: for (unsigned i = 0; i < n; i++) r[i] = a[i] + b[i]; return true;
    case ZE_OP_MUL: for (unsigned i = 0; i < n; i++) r[i] = a[i] * b[i]; return true;
    case ZE_OP_MAD: for (unsigned i = 0; i < n; i++) r[i] = a[i] * b[i] + c[i]; return true;
    case ZE_OP_AND: for (unsigned i = 0; i < n; i++) r[i] = a[i] & b[i]; return true;
    case ZE_OP_OR: for (unsigned i = 0; i < n; i++) r[i] = a[i] | b[i]; return true;
    case ZE_OP_XOR: for (unsigned i = 0; i < n; i++) r[i] = a[i] ^ b[i]; return true;
    case ZE_OP_SHL: for (unsigned i = 0; i < n; i++) r[i] = a[i] << (b[i] & 31); return true;
    case ZE_OP_SHR: for (unsigned i = 0; i < n; i++) r[i] = a[i] >> (b[i] & 31); return true;
    default: return false;
    }
}

bool cmp_lane(const ze_inst_t &in, uint32_t a, uint32_t b)
{
    switch (in.stype) {
    case ZE_TYPE_F: return compare(in.cmod, u2f(a), u2f(b));
    case ZE_TYPE_D: return compare(in.cmod, int32_t(a), int32_t(b));
    default: return compare(in.cmod, a, b);
    }
}

uint32_t lane_bits(unsigned n)
{
    return n >= 32 ? 0xffffffffu : (1u << n) - 1u;
}

uint32_t pred_bits(const ThreadState &t, const ze_inst_t &in)
{
    if (!in.pred)
        return 0xffffffffu;
    return in.pred_inv ? ~t.f[in.flag] : t.f[in.flag];
}

void next(ThreadState &t) { t.ip += ZE_INST_BYTES; }

void jump(ThreadState &t, const ze_inst_t &in) { t.ip += in.dw3; }

// Clear `lanes` from IF entries above the innermost LOOP; returns that LOOP's
// index, or -1 when there is none.
int unwind_to_loop(ThreadState &t, uint32_t lanes)
{
    for (int i = t.ncf - 1; i >= 0; i--) {
        if (t.cf[i].loop)
            return i;
        t.cf[i].saved &= ~lanes;
    }
    return -1;
}

StepResult control_flow(ThreadState &t, const ze_inst_t &in)
{
    const uint32_t p = lane_bits(in.esize) & pred_bits(t, in);
    switch (in.opcode) {
    case ZE_OP_IF:
    case ZE_OP_DO:
        if (t.ncf == kCfDepth) {
            t.raise(ZE_EXC_STACK);
            return StepResult::Stopped;
        }
        t.cf[t.ncf++] = CfEntry{uint8_t(in.opcode == ZE_OP_DO), t.ce, 0};
        if (in.opcode == ZE_OP_IF) {
            t.ce &= p;
            if (!t.ce) {
                jump(t, in);
                return StepResult::Jumped;
            }
        }
        break;
    case ZE_OP_ELSE:
    case ZE_OP_ENDIF:
    case ZE_OP_WHILE: {
        if (!t.ncf) {
            t.raise(ZE_EXC_STACK);
            return StepResult::Stopped;
        }
        CfEntry &top = t.cf[t.ncf - 1];
        if (top.loop != (in.opcode == ZE_OP_WHILE)) {
            t.raise(ZE_EXC_ILLEGAL);
            return StepResult::Stopped;
        }
        if (in.opcode == ZE_OP_ELSE) {
            t.ce = top.saved & ~t.ce;
            if (!t.ce) {
                jump(t, in);
                return StepResult::Jumped;
            }
        } else if (in.opcode == ZE_OP_ENDIF) {
            t.ce = top.saved;
            t.ncf--;
        } else {
            t.ce |= top.cont;
            top.cont = 0;
            const uint32_t n = t.ce & p;
            if (n) {
                t.ce = n;
                jump(t, in);
                return StepResult::Jumped;
            }
            t.ce = top.saved;
            t.ncf--;
        }
        break;
    }
    case ZE_OP_BREAK:
    case ZE_OP_CONT: {
        const uint32_t lanes = t.ce & p;
        int loop = -1;
        for (int i = t.ncf - 1; i >= 0 && loop < 0; i--)
            if (t.cf[i].loop)
                loop = i;
        if (loop < 0) {
            t.raise(ZE_EXC_ILLEGAL);
            return StepResult::Stopped;
        }
        unwind_to_loop(t, lanes);
        if (in.opcode == ZE_OP_CONT)
            t.cf[loop].cont |= lanes;
        t.ce &= ~lanes;
        if (!t.ce) {
            jump(t, in);
            return StepResult::Jumped;
        }
        break;
    }
    case ZE_OP_JMPI:
        if (pred_bits(t, in) & 1u) {
            jump(t, in);
            return StepResult::Jumped;
        }
        break;
    case ZE_OP_CALL:
        if (t.nret == kRetDepth) {
            t.raise(ZE_EXC_STACK);
            return StepResult::Stopped;
        }
        t.ret_ib[t.nret] = t.ib;
        t.ret[t.nret++] = t.ip + ZE_INST_BYTES;
        jump(t, in);
        return StepResult::Jumped;
    case ZE_OP_RET:
        if (!t.nret) {
            t.raise(ZE_EXC_STACK);
            return StepResult::Stopped;
        }
        t.ip = t.ret[--t.nret];
        t.ib = t.ret_ib[t.nret];
        return StepResult::Jumped;
    default:
        break;
    }
    next(t);
    return StepResult::Next;
}

void grf_range(const ze_operand_t &o, unsigned regs, uint8_t &lo, uint8_t &n)
{
    if (o.kind == ZE_OPND_GRFV) {
        lo = o.reg;
        n = uint8_t(regs);
    } else if (o.kind == ZE_OPND_GRFS) {
        lo = o.reg;
        n = 1;
    } else {
        n = 0;
    }
}

}  // namespace

void ThreadState::reset() { std::memset(this, 0, sizeof(*this)); }

uint64_t calla_target(ThreadState &t, const ze_inst_t &in)
{
    return uint64_t(src_value(t, in, in.src[1], 0)) << 32 | src_value(t, in, in.src[0], 0);
}

void ThreadState::raise(unsigned bit, uint32_t address)
{
    cr0[1] |= 1u << bit;
    cr0[2] = ip;
    cr0[3] = address;
    raised = uint8_t(bit);
    // The thread ends here, unless the GT takes it into the SIP (docs/debug.md §2.3).
    status = ThreadStatus::Exception;
}

uint32_t enabled_lanes(const ThreadState &t, const ze_inst_t &in)
{
    if (in.esize == 1)
        return pred_bits(t, in) & 1u;
    return lane_bits(in.esize) & t.ce & pred_bits(t, in);
}

DecodedInst decode_for_model(const uint8_t bytes[ZE_INST_BYTES])
{
    DecodedInst d{};
    if (ze_decode(bytes, &d.in, nullptr, 0) != 0)
        return d;
    d.valid = 1;
    const ze_op_info_t *op = ze_op_info(d.in.opcode);
    d.lat_class = uint8_t(op->lat);
    const unsigned span = d.in.esize > 8 ? d.in.esize / 8 : 1;
    unsigned elems_dst = 1, elems_p = 1;
    if (d.in.opcode == ZE_OP_SEND) {
        const unsigned msg = ze_send_msg(d.in.dw3);
        elems_dst = ze_send_vsize(d.in.dw3);
        if (msg == ZE_MSG_ATOMIC || msg == ZE_MSG_SLM_ATOMIC)
            elems_p = unsigned(ze_atomic_payload_elements(ze_send_atomic(d.in.dw3)));
        else
            elems_p = elems_dst;
    }
    grf_range(d.in.dst, span * elems_dst, d.wr_lo, d.wr_n);
    for (int i = 0; i < 3; i++)
        grf_range(d.in.src[i], span * (i == 1 ? elems_p : 1), d.rd_lo[i], d.rd_n[i]);
    if (d.in.pred)
        d.flag_rd = uint8_t(1u << d.in.flag);
    if (d.in.opcode == ZE_OP_CMP)
        d.flag_wr = uint8_t(1u << d.in.flag);
    return d;
}

bool check_breakpoint(ThreadState &t, const DecodedInst &d)
{
    if (!d.in.bp || t.in_sip)  // the SIP ignores breakpoint bits
        return false;
    if (t.dbg0[0] & 1u) {
        t.dbg0[0] &= ~1u;
        return false;
    }
    t.raise(ZE_EXC_BREAKPOINT);
    return true;
}

StepResult execute(ThreadState &t, const DecodedInst &d)
{
    const ze_inst_t &in = d.in;
    if (!d.valid) {
        t.raise(ZE_EXC_ILLEGAL);
        return StepResult::Stopped;
    }
    if (check_breakpoint(t, d))
        return StepResult::Stopped;
    t.instructions++;
    switch (in.opcode) {
    case ZE_OP_SEND:
        return StepResult::Send;
    case ZE_OP_NOP:
    case ZE_OP_WAIT:
        next(t);
        return StepResult::Next;
    case ZE_OP_HALT:
        next(t);
        if (t.in_sip) {
            t.status = ThreadStatus::DebugWait;  // the stop (docs/debug.md §2.3)
        } else if (t.sip_en && (t.cr0[0] >> ZE_EXC_HALT & 1)) {
            t.raise(ZE_EXC_HALT);  // cr0.2 = the next instruction
        } else {
            t.status = ThreadStatus::Halted;
        }
        return StepResult::Stopped;
    case ZE_OP_SIPRET:
        if (!t.in_sip) {
            t.raise(ZE_EXC_ILLEGAL);
            return StepResult::Stopped;
        }
        return StepResult::SipRet;
    case ZE_OP_CALLA: {
        // docs/isa.md section 3.5: push {ib, ip + 16}, continue at the 64-bit target.
        if (t.in_sip) {
            t.raise(ZE_EXC_ILLEGAL);
            return StepResult::Stopped;
        }
        if (!(pred_bits(t, in) & 1u)) {
            next(t);
            return StepResult::Next;
        }
        const uint64_t target = calla_target(t, in);
        if (target % ZE_INST_BYTES) {
            t.raise(ZE_EXC_MISALIGNED, uint32_t(target));
            return StepResult::Stopped;
        }
        if (t.nret == kRetDepth) {
            t.raise(ZE_EXC_STACK);
            return StepResult::Stopped;
        }
        t.ret_ib[t.nret] = t.ib;
        t.ret[t.nret++] = t.ip + ZE_INST_BYTES;
        t.ib = target;
        t.ip = 0;
        return StepResult::Jumped;
    }
    case ZE_OP_MOV:
        if ((in.dst.kind == ZE_OPND_ARF && !ze_arf_info(in.dst.reg)->writable)) {
            t.raise(ZE_EXC_ILLEGAL);
            return StepResult::Stopped;
        }
        break;
    default:
        if (in.opcode >= ZE_OP_JMPI && in.opcode <= ZE_OP_RET)
            return control_flow(t, in);
        break;
    }

    const unsigned n = in.esize;
    if (in.opcode == ZE_OP_SEL) {
        // The predicate selects; every channel in ce (or channel 0) is written.
        const uint32_t write = n == 1 ? 1u : lane_bits(n) & t.ce;
        const uint32_t sel = pred_bits(t, in);
        uint32_t res[ZE_MAX_SIMD];
        for (unsigned i = 0; i < n; i++)
            res[i] = convert(src_value(t, in, in.src[(sel >> i) & 1u ? 0 : 1], i), in.stype,
                             in.dtype);
        for (unsigned i = 0; i < n; i++)
            if (write >> i & 1u)
                write_dst(t, in, i, res[i]);
        next(t);
        return StepResult::Next;
    }

    const uint32_t lanes = enabled_lanes(t, in);
    uint32_t res[ZE_MAX_SIMD];
    if (in.opcode == ZE_OP_CMP) {
        uint32_t flag = t.f[in.flag];
        for (unsigned i = 0; i < n; i++) {
            if (!(lanes >> i & 1u))
                continue;
            const bool r = cmp_lane(in, src_value(t, in, in.src[0], i),
                                    src_value(t, in, in.src[1], i));
            flag = r ? flag | 1u << i : flag & ~(1u << i);
            res[i] = r ? 0xffffffffu : 0u;
        }
        t.f[in.flag] = flag;
        if (in.dst.kind != ZE_OPND_NULL)
            for (unsigned i = 0; i < n; i++)
                if (lanes >> i & 1u)
                    write_dst(t, in, i, res[i]);
        next(t);
        return StepResult::Next;
    }
    // Gather the sources once (modifiers applied), compute every lane, then
    // write: a destination may overlap a source.
    uint32_t srcv[3][ZE_MAX_SIMD];
    for (int k = 0; k < 3; k++) {
        const ze_operand_t &o = in.src[k];
        if (o.kind == ZE_OPND_GRFV) {
            const uint32_t *p = &t.grf[o.reg][0];  // lanes are contiguous across registers
            for (unsigned i = 0; i < n; i++)
                srcv[k][i] = p[i];
            if (o.neg || o.abs)
                for (unsigned i = 0; i < n; i++)
                    srcv[k][i] = apply_mods(srcv[k][i], o, in.stype);
        } else {
            const uint32_t v = o.kind ? src_value(t, in, o, 0) : 0;
            for (unsigned i = 0; i < n; i++)
                srcv[k][i] = v;
        }
    }
    const bool same = in.stype == in.dtype && in.stype != ZE_TYPE_F;
    if (!same || !alu_int_lanes(in.opcode, srcv, res, n)) {
        for (unsigned i = 0; i < n; i++) {
            const uint32_t r = alu(in, srcv[0][i], srcv[1][i], srcv[2][i]);
            res[i] = same ? r : convert(r, in.stype, in.dtype);
        }
    }
    if (in.dst.kind == ZE_OPND_GRFV) {
        uint32_t *d = &t.grf[in.dst.reg][0];
        for (unsigned i = 0; i < n; i++)
            if (lanes >> i & 1u)
                d[i] = res[i];
    } else {
        for (unsigned i = 0; i < n; i++)
            if (lanes >> i & 1u)
                write_dst(t, in, i, res[i]);
    }
    next(t);
    return StepResult::Next;
}

}  // namespace zesim
