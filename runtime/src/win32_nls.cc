// LCMapStringEx (winnls.h) for the invariant locale: what TraceLogging provider code calls to
// upper-case a provider name (then byte-reversed) before hashing it into the provider GUID.
#include <windows.h>

#include <locale.h>
#include <wctype.h>

#include <climits>

namespace {

bool is_surrogate(WCHAR unit) { return unit >= 0xD800 && unit <= 0xDFFF; }

// The C library's case mapping in a UTF-8 locale (the "C" locale maps ASCII only); ASCII if
// the system has no C.UTF-8.
locale_t unicode_ctype() {
  static const locale_t locale = ::newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  return locale;
}

WCHAR map_case(WCHAR unit, bool upper) {
  if (is_surrogate(unit)) return unit;  // Characters beyond the BMP are left as they are.
  const locale_t locale = unicode_ctype();
  wint_t mapped = unit;
  if (locale != locale_t{}) {
    mapped = upper ? ::towupper_l(unit, locale) : ::towlower_l(unit, locale);
  } else if (upper && unit >= u'a' && unit <= u'z') {
    mapped = unit - (u'a' - u'A');
  } else if (!upper && unit >= u'A' && unit <= u'Z') {
    mapped = unit + (u'a' - u'A');
  }
  // A mapping that leaves the BMP (none in Unicode's simple mappings) keeps the unit.
  return mapped <= 0xFFFF && !is_surrogate(static_cast<WCHAR>(mapped)) ? static_cast<WCHAR>(mapped)
                                                                       : unit;
}

}  // namespace

extern "C" int WINAPI LCMapStringEx(LPCWSTR lpLocaleName, DWORD dwMapFlags, LPCWSTR lpSrcStr,
                                    int cchSrc, LPWSTR lpDestStr, int cchDest,
                                    LPNLSVERSIONINFO lpVersionInformation, LPVOID lpReserved,
                                    LPARAM sortHandle) {
  (void)lpVersionInformation;
  (void)lpReserved;
  (void)sortHandle;
  constexpr DWORD kCase = LCMAP_UPPERCASE | LCMAP_LOWERCASE;
  // The page: 0 on failure, and GetLastError gives ERROR_INVALID_FLAGS, ERROR_INVALID_PARAMETER
  // or ERROR_INSUFFICIENT_BUFFER. A locale other than the invariant one is etwrt's
  // ERROR_INVALID_PARAMETER (no other locale is implemented).
  const auto fail = [](DWORD error) {
    SetLastError(error);
    return 0;
  };
  if (lpLocaleName == nullptr || lpLocaleName[0] != 0) return fail(ERROR_INVALID_PARAMETER);
  if ((dwMapFlags & ~(kCase | LCMAP_BYTEREV)) != 0 || (dwMapFlags & kCase) == kCase) {
    return fail(ERROR_INVALID_FLAGS);
  }
  if (lpSrcStr == nullptr || cchSrc < -1 || cchSrc == 0 || cchDest < 0) {
    return fail(ERROR_INVALID_PARAMETER);
  }
  long long length = cchSrc;
  if (cchSrc == -1) {
    length = 0;
    while (lpSrcStr[length] != 0) ++length;
    ++length;  // With the NUL.
  }
  if (length > INT_MAX) return fail(ERROR_INVALID_PARAMETER);
  if (cchDest == 0) return static_cast<int>(length);
  if (lpDestStr == nullptr) return fail(ERROR_INVALID_PARAMETER);
  if (cchDest < length) return fail(ERROR_INSUFFICIENT_BUFFER);
  for (long long i = 0; i < length; ++i) {
    WCHAR unit = lpSrcStr[i];
    if ((dwMapFlags & kCase) != 0) unit = map_case(unit, (dwMapFlags & LCMAP_UPPERCASE) != 0);
    if ((dwMapFlags & LCMAP_BYTEREV) != 0) unit = static_cast<WCHAR>((unit << 8) | (unit >> 8));
    lpDestStr[i] = unit;
  }
  return static_cast<int>(length);
}
