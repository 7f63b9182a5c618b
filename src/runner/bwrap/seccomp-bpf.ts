// A classic BPF assembler just big enough for a seccomp filter: loads of the
// 32-bit words of struct seccomp_data, conditional jumps to named labels, and
// returns. Jump offsets are resolved here (classic BPF jumps only forward, by
// at most 255 instructions), so the program is written as readable steps.
// The kernel's encoding: struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; },
// little-endian on x86_64, 8 bytes per instruction (linux/filter.h, linux/bpf_common.h).

/** One step of a program: a load, a jump with labels, a return, or a label. */
export type BpfStep =
  | { readonly op: 'load'; readonly offset: number }
  | { readonly op: 'jeq' | 'jge' | 'jset'; readonly k: number; readonly then: string; readonly else?: string }
  | { readonly op: 'ret'; readonly k: number }
  | { readonly op: 'label'; readonly name: string };

/** An assembled instruction (what the kernel reads, before encoding). */
export interface BpfInstruction {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

/** BPF_LD | BPF_W | BPF_ABS: A = the 32-bit word at offset k of seccomp_data. */
export const BPF_LD_W_ABS = 0x20;
/** BPF_JMP | BPF_JEQ | BPF_K */
export const BPF_JEQ_K = 0x15;
/** BPF_JMP | BPF_JGE | BPF_K (unsigned) */
export const BPF_JGE_K = 0x35;
/** BPF_JMP | BPF_JSET | BPF_K: jump when A & k is not zero. */
export const BPF_JSET_K = 0x45;
/** BPF_RET | BPF_K */
export const BPF_RET_K = 0x06;
/** The kernel's limit on a filter's length (BPF_MAXINSNS). */
const BPF_MAX_INSTRUCTIONS = 4096;

const JUMP_CODES = { jeq: BPF_JEQ_K, jge: BPF_JGE_K, jset: BPF_JSET_K } as const;

/** Resolves labels into forward jump offsets; throws on an unknown, backward or too distant label. */
export function assembleBpf(steps: readonly BpfStep[]): BpfInstruction[] {
  const labels = new Map<string, number>();
  let count = 0;
  for (const step of steps) {
    if (step.op !== 'label') {
      count++;
      continue;
    }
    if (labels.has(step.name)) throw new Error(`duplicate BPF label ${step.name}`);
    labels.set(step.name, count);
  }
  if (count === 0 || count > BPF_MAX_INSTRUCTIONS) throw new Error(`a BPF program has 1..${BPF_MAX_INSTRUCTIONS} instructions, not ${count}`);
  const out: BpfInstruction[] = [];
  for (const step of steps) {
    const pc = out.length;
    switch (step.op) {
      case 'label':
        break;
      case 'load':
        out.push({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: u32(step.offset) });
        break;
      case 'ret':
        out.push({ code: BPF_RET_K, jt: 0, jf: 0, k: u32(step.k) });
        break;
      default: {
        const offsetTo = (label: string | undefined): number => {
          if (label === undefined) return 0; // fall through to the next instruction
          const target = labels.get(label);
          if (target === undefined) throw new Error(`unknown BPF label ${label}`);
          const offset = target - pc - 1;
          if (offset < 0 || offset > 255) throw new Error(`BPF label ${label} is ${offset} instructions away (0..255 forward only)`);
          return offset;
        };
        out.push({ code: JUMP_CODES[step.op], jt: offsetTo(step.then), jf: offsetTo(step.else), k: u32(step.k) });
      }
    }
  }
  // Every path must end in a return: the kernel refuses a program that can fall off its end.
  const last = out[out.length - 1];
  if (last === undefined || last.code !== BPF_RET_K) throw new Error('a BPF program must end with ret');
  return out;
}

/** The bytes bubblewrap's --seccomp reads: struct sock_filter[], little-endian. */
export function encodeBpf(program: readonly BpfInstruction[]): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach((instruction, index) => {
    bytes.writeUInt16LE(instruction.code, index * 8);
    bytes.writeUInt8(instruction.jt, index * 8 + 2);
    bytes.writeUInt8(instruction.jf, index * 8 + 3);
    bytes.writeUInt32LE(instruction.k, index * 8 + 4);
  });
  return bytes;
}

/** Reads encoded bytes back into instructions (for tests and `doctor`). */
export function decodeBpf(bytes: Uint8Array): BpfInstruction[] {
  if (bytes.length % 8 !== 0) throw new Error(`a BPF program is a multiple of 8 bytes, not ${bytes.length}`);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const out: BpfInstruction[] = [];
  for (let at = 0; at < view.length; at += 8) {
    out.push({ code: view.readUInt16LE(at), jt: view.readUInt8(at + 2), jf: view.readUInt8(at + 3), k: view.readUInt32LE(at + 4) });
  }
  return out;
}

function u32(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) throw new Error(`not a 32-bit unsigned value: ${value}`);
  return value;
}
