/*
 * etwrt: the Microsoft compiler's keywords and the winnt.h names built on them, given the
 * meaning MSVC gives them, for GCC and Clang on Linux. Generated provider code (mc.exe output,
 * TraceLogging headers) is written with them; see docs/etwrt/use.md, "Real provider code".
 * Included by etwrt/win32_base.h; not meant to be included on its own.
 */
#ifndef ETWRT_MSVC_H
#define ETWRT_MSVC_H

#ifdef __cplusplus
#define EXTERN_C extern "C"
#define EXTERN_C_START extern "C" {
#define EXTERN_C_END }
#else
#define EXTERN_C extern
#define EXTERN_C_START
#define EXTERN_C_END
#endif

/* x64 and ARM64 have one calling convention; MSVC ignores these there too. */
#define __stdcall
#define __cdecl
#define __fastcall
#define __thiscall
#define __vectorcall

#define __int8 char
#define __int16 short
#define __int32 int
#define __int64 long long

/* MSVC's __forceinline is an ordinary inline function (one definition across translation
 * units, usable as `static FORCEINLINE` in a class) that is always inlined: not `static`. */
#ifdef __cplusplus
#define __forceinline inline __attribute__((__always_inline__))
#else
#define __forceinline __inline__ __attribute__((__always_inline__))
#endif
#define FORCEINLINE __forceinline

#define UNALIGNED
#define UNALIGNED64
#define __unaligned

#if defined(__aarch64__)
#define SYSTEM_CACHE_ALIGNMENT_SIZE 128
#else
#define SYSTEM_CACHE_ALIGNMENT_SIZE 64
#endif
#define DECLSPEC_ALIGN(x) __attribute__((__aligned__(x)))
#define DECLSPEC_CACHEALIGN DECLSPEC_ALIGN(SYSTEM_CACHE_ALIGNMENT_SIZE)
#define DECLSPEC_NOINLINE __attribute__((__noinline__))
#define DECLSPEC_NORETURN __attribute__((__noreturn__))
#define DECLSPEC_NOTHROW
#define DECLSPEC_NOVTABLE
#define DECLSPEC_EXPORT __attribute__((__visibility__("default")))
#define DECLSPEC_SELECTANY __declspec(selectany)

/* __declspec(x) becomes ETWRT_DECLSPEC_x: a specifier etwrt does not know is a compile error
 * naming it, never silently dropped. */
#ifndef __declspec
#define __declspec(spec) ETWRT_DECLSPEC_##spec
#endif
#define ETWRT_DECLSPEC_align(x) __attribute__((__aligned__(x)))
#define ETWRT_DECLSPEC_noinline __attribute__((__noinline__))
#define ETWRT_DECLSPEC_noreturn __attribute__((__noreturn__))
#define ETWRT_DECLSPEC_nothrow
#define ETWRT_DECLSPEC_novtable
#define ETWRT_DECLSPEC_restrict
#define ETWRT_DECLSPEC_noalias
#define ETWRT_DECLSPEC_dllimport
#define ETWRT_DECLSPEC_dllexport __attribute__((__visibility__("default")))

/*
 * __declspec(selectany): MSVC makes `EXTERN_C __declspec(selectany) ULONG Bits[1];` (no
 * initializer, as mc.exe writes it) a definition, one instance per program, whichever
 * translation units define it. A weak *declaration* would leave &Bits == NULL; so the
 * specifier ends the declaration it follows (an `extern` or `extern "C"` before it then
 * declares the function etwrt_selectany_, harmless) and starts a new one that defines the
 * object: a C++17 inline variable (merged by the linker), or in C a weak tentative
 * definition (zero-filled, merged). Inside `extern "C" { }` (as mc.exe output is) the object
 * keeps C linkage. The object's own `extern`, if it follows the specifier, stays.
 */
ETWRT_EXTERN_C void etwrt_selectany_(void);
#ifdef __cplusplus
#define ETWRT_DECLSPEC_selectany \
  void etwrt_selectany_(void);   \
  inline
#else
#define ETWRT_DECLSPEC_selectany \
  void etwrt_selectany_(void);   \
  __attribute__((__weak__))
#endif

/* The CRT intrinsics (stdlib.h) that TraceLogging headers use. */
static inline unsigned short _byteswap_ushort(unsigned short v) { return __builtin_bswap16(v); }
/* Windows' unsigned long is 32 bits wide. */
static inline unsigned int _byteswap_ulong(unsigned int v) { return __builtin_bswap32(v); }
static inline unsigned long long _byteswap_uint64(unsigned long long v) {
  return __builtin_bswap64(v);
}
/* GCC's <x86intrin.h> has the rotations as macros; they win when it came first. */
#ifndef _rotl
static inline unsigned int _rotl(unsigned int v, int shift) {
  shift &= 31;
  return shift == 0 ? v : (v << shift) | (v >> (32 - shift));
}
#endif
#ifndef _rotr
static inline unsigned int _rotr(unsigned int v, int shift) {
  shift &= 31;
  return shift == 0 ? v : (v >> shift) | (v << (32 - shift));
}
#endif

#endif /* ETWRT_MSVC_H */
