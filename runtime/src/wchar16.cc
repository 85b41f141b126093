// etwrt: the C library's wide-string functions for code built with a 2-byte wchar_t
// (-fshort-wchar, etwrt::win32_abi). glibc's are compiled for its 4-byte wchar_t and misread
// UTF-16 text, so a program linked with etwrt::win32_abi has its own calls to them redirected
// here (ld --wrap, see runtime/CMakeLists.txt): each __wrap_<name> is <name> on 16-bit units.
// Only the calls of that program's own objects are redirected; glibc and libstdc++ keep theirs.
// The bounds-checked *_s forms Windows code calls (etwrt/wide_crt.h) are here too.
// This file is compiled with the library's 4-byte wchar_t: a unit is a char16_t here.
#include <errno.h>
#include <stddef.h>

#include <cstring>

namespace {

using Unit = char16_t;

std::size_t length(const Unit* s) {
  std::size_t n = 0;
  while (s[n] != 0) ++n;
  return n;
}

std::size_t bounded_length(const Unit* s, std::size_t most) {
  std::size_t n = 0;
  while (n < most && s[n] != 0) ++n;
  return n;
}

int compare_units(Unit a, Unit b) { return a < b ? -1 : a > b ? 1 : 0; }

}  // namespace

extern "C" {

std::size_t __wrap_wcslen(const Unit* s) { return length(s); }

std::size_t __wrap_wcsnlen(const Unit* s, std::size_t most) { return bounded_length(s, most); }

Unit* __wrap_wcscpy(Unit* dest, const Unit* src) {
  std::memmove(dest, src, (length(src) + 1) * sizeof(Unit));
  return dest;
}

Unit* __wrap_wcsncpy(Unit* dest, const Unit* src, std::size_t n) {
  const std::size_t copied = bounded_length(src, n);
  std::memmove(dest, src, copied * sizeof(Unit));
  for (std::size_t i = copied; i < n; ++i) dest[i] = 0;  // As strncpy: NUL-padded.
  return dest;
}

Unit* __wrap_wcscat(Unit* dest, const Unit* src) {
  __wrap_wcscpy(dest + length(dest), src);
  return dest;
}

Unit* __wrap_wcsncat(Unit* dest, const Unit* src, std::size_t n) {
  Unit* end = dest + length(dest);
  const std::size_t copied = bounded_length(src, n);
  std::memmove(end, src, copied * sizeof(Unit));
  end[copied] = 0;
  return dest;
}

int __wrap_wcscmp(const Unit* a, const Unit* b) {
  for (;; ++a, ++b) {
    if (*a != *b || *a == 0) return compare_units(*a, *b);
  }
}

int __wrap_wcsncmp(const Unit* a, const Unit* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i] || a[i] == 0) return compare_units(a[i], b[i]);
  }
  return 0;
}

Unit* __wrap_wcschr(const Unit* s, Unit c) {
  for (;; ++s) {
    if (*s == c) return const_cast<Unit*>(s);
    if (*s == 0) return nullptr;
  }
}

Unit* __wrap_wcsrchr(const Unit* s, Unit c) {
  const Unit* found = nullptr;
  for (;; ++s) {
    if (*s == c) found = s;
    if (*s == 0) return const_cast<Unit*>(found);
  }
}

Unit* __wrap_wcsstr(const Unit* haystack, const Unit* needle) {
  const std::size_t n = length(needle);
  for (; *haystack != 0 || n == 0; ++haystack) {
    if (__wrap_wcsncmp(haystack, needle, n) == 0) return const_cast<Unit*>(haystack);
    if (*haystack == 0) break;
  }
  return nullptr;
}

Unit* __wrap_wmemcpy(Unit* dest, const Unit* src, std::size_t n) {
  if (n != 0) std::memcpy(dest, src, n * sizeof(Unit));
  return dest;
}

Unit* __wrap_wmemmove(Unit* dest, const Unit* src, std::size_t n) {
  if (n != 0) std::memmove(dest, src, n * sizeof(Unit));
  return dest;
}

Unit* __wrap_wmemset(Unit* dest, Unit c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dest[i] = c;
  return dest;
}

int __wrap_wmemcmp(const Unit* a, const Unit* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return compare_units(a[i], b[i]);
  }
  return 0;
}

Unit* __wrap_wmemchr(const Unit* s, Unit c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (s[i] == c) return const_cast<Unit*>(s + i);
  }
  return nullptr;
}

// The CRT's bounds-checked forms (C11 Annex K as Microsoft's CRT has them), exported under
// etwrt_ names (etwrt/wide_crt.h defines the CRT's names inline on them): a library of the same
// process with its own wcscpy_s on 4-byte units keeps it. On an error the
// destination, when there is one, becomes the empty string and the code is returned (Microsoft's
// CRT also calls its invalid-parameter handler, which by default ends the program; etwrt only
// returns the code).
int etwrt_wcscpy_s(Unit* dest, std::size_t size, const Unit* src) {
  if (dest == nullptr || size == 0) return EINVAL;
  if (src == nullptr) {
    dest[0] = 0;
    return EINVAL;
  }
  const std::size_t n = bounded_length(src, size);
  if (n == size) {
    dest[0] = 0;
    return ERANGE;
  }
  std::memmove(dest, src, (n + 1) * sizeof(Unit));
  return 0;
}

int etwrt_wcscat_s(Unit* dest, std::size_t size, const Unit* src) {
  if (dest == nullptr || size == 0) return EINVAL;
  const std::size_t used = bounded_length(dest, size);
  if (src == nullptr || used == size) {  // No NUL within size: not a string.
    dest[0] = 0;
    return EINVAL;
  }
  const std::size_t n = length(src);
  if (used + n >= size) {
    dest[0] = 0;
    return ERANGE;
  }
  std::memmove(dest + used, src, (n + 1) * sizeof(Unit));
  return 0;
}

int etwrt_wcsncpy_s(Unit* dest, std::size_t size, const Unit* src, std::size_t count) {
  if (dest == nullptr || size == 0) return EINVAL;
  if (src == nullptr) {
    dest[0] = 0;
    return EINVAL;
  }
  const std::size_t n = bounded_length(src, count);
  if (n >= size) {
    dest[0] = 0;
    return ERANGE;
  }
  std::memmove(dest, src, n * sizeof(Unit));
  dest[n] = 0;
  return 0;
}

std::size_t etwrt_wcsnlen_s(const Unit* s, std::size_t most) {
  return s == nullptr ? 0 : bounded_length(s, most);
}

}  // extern "C"
