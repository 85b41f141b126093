/*
 * etwrt: the SAL annotations (Microsoft's source-code annotation language) that Windows
 * headers, mc.exe output and TraceLogging headers put on prototypes and fields. They only
 * inform Microsoft's static analyser, so here every one is an empty macro. Code written for
 * Windows may include <sal.h> itself; etwrt's other headers include it for it.
 */
#ifndef ETWRT_SAL_H
#define ETWRT_SAL_H

/* Parameters. */
#define _In_
#define _In_opt_
#define _In_z_
#define _In_opt_z_
#define _In_range_(lo, hi)
#define _In_reads_(n)
#define _In_reads_opt_(n)
#define _In_reads_z_(n)
#define _In_reads_or_z_(n)
#define _In_reads_bytes_(n)
#define _In_reads_bytes_opt_(n)
#define _Out_
#define _Out_opt_
#define _Out_range_(lo, hi)
#define _Out_writes_(n)
#define _Out_writes_opt_(n)
#define _Out_writes_z_(n)
#define _Out_writes_to_(size, count)
#define _Out_writes_to_opt_(size, count)
#define _Out_writes_all_(n)
#define _Out_writes_bytes_(n)
#define _Out_writes_bytes_opt_(n)
#define _Out_writes_bytes_to_(size, count)
#define _Out_writes_bytes_to_opt_(size, count)
#define _Out_writes_bytes_all_(n)
#define _Outptr_
#define _Outptr_opt_
#define _Outptr_result_maybenull_
#define _Outptr_result_bytebuffer_(n)
#define _Inout_
#define _Inout_opt_
#define _Inout_z_
#define _Inout_updates_(n)
#define _Inout_updates_opt_(n)
#define _Inout_updates_z_(n)
#define _Inout_updates_bytes_(n)
#define _Inout_updates_bytes_opt_(n)
#define _Inout_updates_all_(n)
#define _Inout_updates_bytes_all_(n)
#define _Reserved_
#define _Printf_format_string_
#define _Frees_ptr_
#define _Frees_ptr_opt_

/* Return values and functions. */
#define _Success_(expr)
#define _Return_type_success_(expr)
#define _Must_inspect_result_
#define _Check_return_
#define _Ret_
#define _Ret_z_
#define _Ret_maybenull_
#define _Ret_maybenull_z_
#define _Ret_notnull_
#define _Ret_range_(lo, hi)
#define _Ret_bytecount_(n)
#define _Ret_opt_bytecount_(n)
#define _Ret_writes_(n)
#define _Ret_writes_bytes_(n)
#define _Ret_writes_maybenull_(n)
#define _Use_decl_annotations_
#define _IRQL_requires_max_(irql)
#define _IRQL_requires_(irql)

/* Fields, conditions and general annotations. */
#define _Field_size_(n)
#define _Field_size_opt_(n)
#define _Field_size_bytes_(n)
#define _Field_size_bytes_opt_(n)
#define _Field_size_part_(size, count)
#define _Field_size_bytes_part_(size, count)
#define _Field_z_
#define _Field_range_(lo, hi)
#define _Struct_size_bytes_(n)
#define _When_(cond, annotation)
#define _At_(target, annotation)
#define _Always_(annotation)
#define _Pre_
#define _Post_
#define _Pre_valid_
#define _Post_valid_
#define _Pre_z_
#define _Post_z_
#define _Pre_maybenull_
#define _Pre_notnull_
#define _Post_maybenull_
#define _Post_notnull_
#define _Post_equal_to_(expr)
#define _Post_satisfies_(expr)
#define _Null_terminated_
#define _NullNull_terminated_
#define _Notnull_
#define _Maybenull_
#define _Analysis_assume_(expr)
#define _Analysis_noreturn_
#define _Analysis_assume_nullterminated_(p)
#define _Deref_out_range_(lo, hi)
#define _Deref_in_range_(lo, hi)
#define _Deref_out_
#define _Deref_out_z_
#define _Post_invalid_
#define _Post_ptr_invalid_

/* The SAL 1 "cap/count" spellings mc.exe and TraceLogging headers still use. */
#define _In_count_(n)
#define _Inout_count_(n)
#define _Inout_opt_count_(n)
#define _Inout_bytecount_(n)
#define _In_count_x_(n)
#define _In_opt_count_(n)
#define _In_bytecount_(n)
#define _In_bytecount_x_(n)
#define _In_opt_bytecount_(n)
#define _Out_cap_(n)
#define _Out_opt_cap_(n)
#define _Out_bytecap_(n)
#define _Out_opt_bytecap_(n)
#define _Inout_cap_(n)
#define _Inout_bytecap_(n)
#define _Pre_cap_(n)
#define _Pre_bytecap_(n)
#define _Pre_readable_size_(n)
#define _Pre_writable_size_(n)
#define _Pre_readable_byte_size_(n)
#define _Pre_writable_byte_size_(n)
#define _Post_readable_size_(n)
#define _Post_writable_size_(n)
#define _Post_readable_byte_size_(n)
#define _Post_writable_byte_size_(n)

#endif /* ETWRT_SAL_H */
