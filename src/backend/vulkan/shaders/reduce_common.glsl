// Workgroup-wide sum and max over 64 invocations: subgroup arithmetic when built with USE_SUBGROUP (the
// device reports VK_SUBGROUP_FEATURE_ARITHMETIC_BIT in compute), else a shared-memory tree.
#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#define TB_WG 64
shared float tb_red[TB_WG];

float tb_wg_sum(float v) {
#ifdef USE_SUBGROUP
  v = subgroupAdd(v);
  if (subgroupElect()) tb_red[gl_SubgroupID] = v;
  barrier();
  float r = 0.0;
  for (uint i = 0u; i < gl_NumSubgroups; i++) r += tb_red[i];
  barrier();
  return r;
#else
  uint lid = gl_LocalInvocationID.x;
  tb_red[lid] = v;
  barrier();
  for (uint s = TB_WG / 2; s > 0u; s >>= 1) {
    if (lid < s) tb_red[lid] += tb_red[lid + s];
    barrier();
  }
  float r = tb_red[0];
  barrier();
  return r;
#endif
}

float tb_wg_max(float v) {
#ifdef USE_SUBGROUP
  v = subgroupMax(v);
  if (subgroupElect()) tb_red[gl_SubgroupID] = v;
  barrier();
  float r = tb_red[0];
  for (uint i = 1u; i < gl_NumSubgroups; i++) r = max(r, tb_red[i]);
  barrier();
  return r;
#else
  uint lid = gl_LocalInvocationID.x;
  tb_red[lid] = v;
  barrier();
  for (uint s = TB_WG / 2; s > 0u; s >>= 1) {
    if (lid < s) tb_red[lid] = max(tb_red[lid], tb_red[lid + s]);
    barrier();
  }
  float r = tb_red[0];
  barrier();
  return r;
#endif
}

float tb_wg_min(float v) { return -tb_wg_max(-v); }

// The row a workgroup works on: workgroups wrap from x into y beyond 65535.
uint tb_row() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
