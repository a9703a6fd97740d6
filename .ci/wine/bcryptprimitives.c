/*
 * A stand-in for bcryptprimitives.dll, which Wine 8.0 (Debian 12) lacks and
 * every Go 1.22+ Windows binary loads for ProcessPrng. It exports that one
 * function on top of RtlGenRandom (SystemFunction036 in advapi32), which
 * Wine implements. Built by .ci/wine/run with mingw-w64 and put into the
 * private Wine prefix only; it is never shipped.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG len);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
