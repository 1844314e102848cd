// The attention tile kernel of this CPU's kernel set (AVX-512 where the CPU
// has AVX-512 F/BW/VL and VNNI) at head_dim 128: see attention-tile-checks.ts.
import { attentionTileChecks } from './attention-tile-checks.js';

attentionTileChecks(() => {});
