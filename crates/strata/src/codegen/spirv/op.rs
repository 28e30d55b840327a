//! The numbers of the SPIR-V instructions, enumerants and GLSL.std.450 functions the writer
//! uses (SPIR-V 1.6 specification, unified headers), by name.

#![allow(dead_code)]

// Instructions.
pub const NAME: u32 = 5;
pub const EXTENSION: u32 = 10;
pub const EXT_INST_IMPORT: u32 = 11;
pub const EXT_INST: u32 = 12;
pub const MEMORY_MODEL: u32 = 14;
pub const ENTRY_POINT: u32 = 15;
pub const EXECUTION_MODE: u32 = 16;
/// The execution mode `SignedZeroInfNanPreserve` (float controls), with a width operand.
pub const MODE_SIGNED_ZERO_INF_NAN_PRESERVE: u32 = 4461;
/// The execution mode `DenormPreserve` (float controls), with a width operand.
pub const MODE_DENORM_PRESERVE: u32 = 4459;
pub const CAPABILITY: u32 = 17;
pub const TYPE_VOID: u32 = 19;
pub const TYPE_BOOL: u32 = 20;
pub const TYPE_INT: u32 = 21;
pub const TYPE_FLOAT: u32 = 22;
pub const TYPE_VECTOR: u32 = 23;
pub const TYPE_ARRAY: u32 = 28;
pub const TYPE_RUNTIME_ARRAY: u32 = 29;
pub const TYPE_STRUCT: u32 = 30;
pub const TYPE_POINTER: u32 = 32;
pub const TYPE_FUNCTION: u32 = 33;
pub const CONSTANT_TRUE: u32 = 41;
pub const CONSTANT_FALSE: u32 = 42;
pub const CONSTANT: u32 = 43;
pub const CONSTANT_COMPOSITE: u32 = 44;
pub const SPEC_CONSTANT: u32 = 50;
pub const SPEC_CONSTANT_COMPOSITE: u32 = 51;
pub const SPEC_CONSTANT_OP: u32 = 52;
pub const FUNCTION: u32 = 54;
pub const FUNCTION_END: u32 = 56;
pub const VARIABLE: u32 = 59;
pub const LOAD: u32 = 61;
pub const STORE: u32 = 62;
pub const ACCESS_CHAIN: u32 = 65;
pub const DECORATE: u32 = 71;
pub const MEMBER_DECORATE: u32 = 72;
pub const COMPOSITE_CONSTRUCT: u32 = 80;
pub const COMPOSITE_EXTRACT: u32 = 81;
pub const CONVERT_F_TO_U: u32 = 109;
pub const CONVERT_F_TO_S: u32 = 110;
pub const CONVERT_S_TO_F: u32 = 111;
pub const CONVERT_U_TO_F: u32 = 112;
pub const U_CONVERT: u32 = 113;
pub const S_CONVERT: u32 = 114;
pub const F_CONVERT: u32 = 115;
pub const BITCAST: u32 = 124;
pub const S_NEGATE: u32 = 126;
pub const F_NEGATE: u32 = 127;
pub const I_ADD: u32 = 128;
pub const F_ADD: u32 = 129;
pub const I_SUB: u32 = 130;
pub const F_SUB: u32 = 131;
pub const I_MUL: u32 = 132;
pub const F_MUL: u32 = 133;
pub const U_DIV: u32 = 134;
pub const S_DIV: u32 = 135;
pub const F_DIV: u32 = 136;
pub const U_MOD: u32 = 137;
pub const S_REM: u32 = 138;
pub const F_REM: u32 = 140;
pub const U_MUL_EXTENDED: u32 = 151;
pub const S_MUL_EXTENDED: u32 = 152;
pub const IS_NAN: u32 = 156;
pub const IS_INF: u32 = 157;
pub const LOGICAL_EQUAL: u32 = 164;
pub const LOGICAL_NOT_EQUAL: u32 = 165;
pub const LOGICAL_OR: u32 = 166;
pub const LOGICAL_AND: u32 = 167;
pub const LOGICAL_NOT: u32 = 168;
pub const SELECT: u32 = 169;
pub const I_EQUAL: u32 = 170;
pub const I_NOT_EQUAL: u32 = 171;
pub const U_GREATER_THAN: u32 = 172;
pub const S_GREATER_THAN: u32 = 173;
pub const U_GREATER_THAN_EQUAL: u32 = 174;
pub const S_GREATER_THAN_EQUAL: u32 = 175;
pub const U_LESS_THAN: u32 = 176;
pub const S_LESS_THAN: u32 = 177;
pub const U_LESS_THAN_EQUAL: u32 = 178;
pub const S_LESS_THAN_EQUAL: u32 = 179;
pub const F_ORD_EQUAL: u32 = 180;
pub const F_ORD_NOT_EQUAL: u32 = 182;
pub const F_UNORD_NOT_EQUAL: u32 = 183;
pub const F_ORD_LESS_THAN: u32 = 184;
pub const F_ORD_GREATER_THAN: u32 = 186;
pub const F_ORD_LESS_THAN_EQUAL: u32 = 188;
pub const F_ORD_GREATER_THAN_EQUAL: u32 = 190;
pub const SHIFT_RIGHT_LOGICAL: u32 = 194;
pub const SHIFT_RIGHT_ARITHMETIC: u32 = 195;
pub const SHIFT_LEFT_LOGICAL: u32 = 196;
pub const BITWISE_OR: u32 = 197;
pub const BITWISE_XOR: u32 = 198;
pub const BITWISE_AND: u32 = 199;
pub const NOT: u32 = 200;
pub const BIT_COUNT: u32 = 205;
pub const CONTROL_BARRIER: u32 = 224;
pub const MEMORY_BARRIER: u32 = 225;
pub const ATOMIC_LOAD: u32 = 227;
pub const ATOMIC_EXCHANGE: u32 = 229;
pub const ATOMIC_COMPARE_EXCHANGE: u32 = 230;
pub const ATOMIC_I_ADD: u32 = 234;
pub const ATOMIC_I_SUB: u32 = 235;
pub const ATOMIC_S_MIN: u32 = 236;
pub const ATOMIC_U_MIN: u32 = 237;
pub const ATOMIC_S_MAX: u32 = 238;
pub const ATOMIC_U_MAX: u32 = 239;
pub const ATOMIC_AND: u32 = 240;
pub const ATOMIC_OR: u32 = 241;
pub const ATOMIC_XOR: u32 = 242;
pub const LOOP_MERGE: u32 = 246;
pub const SELECTION_MERGE: u32 = 247;
pub const LABEL: u32 = 248;
pub const BRANCH: u32 = 249;
pub const BRANCH_CONDITIONAL: u32 = 250;
pub const RETURN: u32 = 253;
pub const UNREACHABLE: u32 = 255;
pub const GROUP_NON_UNIFORM_ALL: u32 = 334;
pub const GROUP_NON_UNIFORM_ANY: u32 = 335;
pub const GROUP_NON_UNIFORM_BROADCAST: u32 = 337;
pub const GROUP_NON_UNIFORM_BALLOT: u32 = 339;
pub const GROUP_NON_UNIFORM_SHUFFLE: u32 = 345;
pub const GROUP_NON_UNIFORM_SHUFFLE_XOR: u32 = 346;
pub const GROUP_NON_UNIFORM_SHUFFLE_UP: u32 = 347;
pub const GROUP_NON_UNIFORM_SHUFFLE_DOWN: u32 = 348;
pub const GROUP_NON_UNIFORM_I_ADD: u32 = 349;
pub const GROUP_NON_UNIFORM_F_ADD: u32 = 350;
pub const GROUP_NON_UNIFORM_S_MIN: u32 = 353;
pub const GROUP_NON_UNIFORM_U_MIN: u32 = 354;
pub const GROUP_NON_UNIFORM_F_MIN: u32 = 355;
pub const GROUP_NON_UNIFORM_S_MAX: u32 = 356;
pub const GROUP_NON_UNIFORM_U_MAX: u32 = 357;
pub const GROUP_NON_UNIFORM_F_MAX: u32 = 358;
pub const ATOMIC_F_MIN_EXT: u32 = 5614;
pub const ATOMIC_F_MAX_EXT: u32 = 5615;
pub const ATOMIC_F_ADD_EXT: u32 = 6035;

// Capabilities.
pub const CAP_SHADER: u32 = 1;
pub const CAP_FLOAT16: u32 = 9;
pub const CAP_FLOAT64: u32 = 10;
pub const CAP_INT64: u32 = 11;
pub const CAP_INT64_ATOMICS: u32 = 12;
pub const CAP_INT16: u32 = 22;
pub const CAP_INT8: u32 = 39;
pub const CAP_GROUP_NON_UNIFORM: u32 = 61;
pub const CAP_GROUP_NON_UNIFORM_VOTE: u32 = 62;
pub const CAP_GROUP_NON_UNIFORM_ARITHMETIC: u32 = 63;
pub const CAP_GROUP_NON_UNIFORM_BALLOT: u32 = 64;
pub const CAP_GROUP_NON_UNIFORM_SHUFFLE: u32 = 65;
pub const CAP_GROUP_NON_UNIFORM_SHUFFLE_RELATIVE: u32 = 66;
pub const CAP_STORAGE_BUFFER_16BIT_ACCESS: u32 = 4433;
pub const CAP_STORAGE_BUFFER_8BIT_ACCESS: u32 = 4448;
pub const CAP_SIGNED_ZERO_INF_NAN_PRESERVE: u32 = 4466;
pub const CAP_DENORM_PRESERVE: u32 = 4464;
pub const CAP_ATOMIC_FLOAT32_MIN_MAX: u32 = 5612;
pub const CAP_ATOMIC_FLOAT64_MIN_MAX: u32 = 5613;
pub const CAP_ATOMIC_FLOAT32_ADD: u32 = 6033;
pub const CAP_ATOMIC_FLOAT64_ADD: u32 = 6034;

// Decorations.
pub const DEC_SPEC_ID: u32 = 1;
pub const DEC_BLOCK: u32 = 2;
pub const DEC_ARRAY_STRIDE: u32 = 6;
pub const DEC_BUILTIN: u32 = 11;
pub const DEC_NON_WRITABLE: u32 = 24;
pub const DEC_BINDING: u32 = 33;
pub const DEC_DESCRIPTOR_SET: u32 = 34;
pub const DEC_OFFSET: u32 = 35;
pub const DEC_NO_CONTRACTION: u32 = 42;

// Built-ins.
pub const BI_NUM_WORKGROUPS: u32 = 24;
pub const BI_WORKGROUP_SIZE: u32 = 25;
pub const BI_WORKGROUP_ID: u32 = 26;
pub const BI_LOCAL_INVOCATION_ID: u32 = 27;
pub const BI_GLOBAL_INVOCATION_ID: u32 = 28;

// Storage classes.
pub const SC_INPUT: u32 = 1;
pub const SC_WORKGROUP: u32 = 4;
pub const SC_FUNCTION: u32 = 7;
pub const SC_PUSH_CONSTANT: u32 = 9;
pub const SC_STORAGE_BUFFER: u32 = 12;

// Scopes.
pub const SCOPE_DEVICE: u32 = 1;
pub const SCOPE_WORKGROUP: u32 = 2;
pub const SCOPE_SUBGROUP: u32 = 3;

// Memory semantics.
pub const SEM_ACQUIRE: u32 = 0x2;
pub const SEM_RELEASE: u32 = 0x4;
pub const SEM_ACQUIRE_RELEASE: u32 = 0x8;
pub const SEM_UNIFORM_MEMORY: u32 = 0x40;
pub const SEM_WORKGROUP_MEMORY: u32 = 0x100;

// Group operations.
pub const GROUP_REDUCE: u32 = 0;
pub const GROUP_INCLUSIVE_SCAN: u32 = 1;
pub const GROUP_EXCLUSIVE_SCAN: u32 = 2;

// GLSL.std.450.
pub const GLSL_ROUND_EVEN: u32 = 2;
pub const GLSL_TRUNC: u32 = 3;
pub const GLSL_F_ABS: u32 = 4;
pub const GLSL_S_ABS: u32 = 5;
pub const GLSL_FLOOR: u32 = 8;
pub const GLSL_CEIL: u32 = 9;
pub const GLSL_SIN: u32 = 13;
pub const GLSL_COS: u32 = 14;
pub const GLSL_TAN: u32 = 15;
pub const GLSL_ASIN: u32 = 16;
pub const GLSL_ACOS: u32 = 17;
pub const GLSL_ATAN: u32 = 18;
pub const GLSL_SINH: u32 = 19;
pub const GLSL_COSH: u32 = 20;
pub const GLSL_TANH: u32 = 21;
pub const GLSL_ASINH: u32 = 22;
pub const GLSL_ACOSH: u32 = 23;
pub const GLSL_ATANH: u32 = 24;
pub const GLSL_ATAN2: u32 = 25;
pub const GLSL_POW: u32 = 26;
pub const GLSL_EXP: u32 = 27;
pub const GLSL_LOG: u32 = 28;
pub const GLSL_EXP2: u32 = 29;
pub const GLSL_LOG2: u32 = 30;
pub const GLSL_SQRT: u32 = 31;
pub const GLSL_INVERSE_SQRT: u32 = 32;
pub const GLSL_U_MIN: u32 = 38;
pub const GLSL_S_MIN: u32 = 39;
pub const GLSL_U_MAX: u32 = 41;
pub const GLSL_S_MAX: u32 = 42;
pub const GLSL_FMA: u32 = 50;
pub const GLSL_LDEXP: u32 = 53;
pub const GLSL_FIND_U_MSB: u32 = 75;
pub const GLSL_N_MIN: u32 = 79;
pub const GLSL_N_MAX: u32 = 80;
