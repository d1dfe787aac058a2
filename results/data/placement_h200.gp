set terminal svg size 1400,900 dynamic
set output 'placement_h200.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "Expert placement x schedule on h200: dispatch + combine time summed over the layers (bars), lower bound (dash), worst layer's compute imbalance (number)"
unset title
set multiplot layout 2,2 title "Expert placement x schedule on h200: dispatch + combine time summed over the layers (bars), lower bound (dash), worst layer's compute imbalance (number)"
set grid ytics
set bmargin 3.5
set title 'deepseek-v2-lite, EP32 (4 x 8 GPUs), token traffic, per-server dedup'
set boxwidth 0.20
set style fill solid 0.75
set xtics ("contiguous" 1, "round-robin" 2, "eplb:0" 3, "eplb:32" 4, "eplb:64" 5, "eplb:32\nspread" 6) font ',9'
set xrange [0.4:6.6]
set yrange [0:14.3528]
set ylabel 'time, ms'
set key inside top right font ',9'
plot 'placement_h200_deepseek-v2-lite_ep32.dat' using ($1-0.30):2 with boxes fs solid 0.75 lc rgb '#9400d3' title 'fast', 'placement_h200_deepseek-v2-lite_ep32.dat' using ($1-0.10):3 with boxes fs solid 0.75 lc rgb '#e69f00' title 'hier', 'placement_h200_deepseek-v2-lite_ep32.dat' using ($1+0.10):4 with boxes fs solid 0.75 lc rgb '#0072b2' title 'fanout', 'placement_h200_deepseek-v2-lite_ep32.dat' using ($1+0.30):5 with boxes fs solid 0.75 lc rgb '#555555' title 'auto', 'placement_h200_deepseek-v2-lite_ep32.dat' using 1:6:(0.40) with xerrorbars pt 0 lw 2.5 lc rgb 'black' title 'lower bound', 'placement_h200_deepseek-v2-lite_ep32.dat' using 1:8:(sprintf('%.2f', $7)) with labels font ',9' notitle

set title 'deepseek-v2-lite, EP64 (8 x 8 GPUs), token traffic, per-server dedup'
set boxwidth 0.20
set style fill solid 0.75
set xtics ("contiguous" 1, "round-robin" 2, "eplb:0" 3, "eplb:64" 4, "eplb:128" 5, "eplb:64\nspread" 6) font ',9'
set xrange [0.4:6.6]
set yrange [0:13.6623]
set ylabel 'time, ms'
unset key
plot 'placement_h200_deepseek-v2-lite_ep64.dat' using ($1-0.30):2 with boxes fs solid 0.75 lc rgb '#9400d3' title 'fast', 'placement_h200_deepseek-v2-lite_ep64.dat' using ($1-0.10):3 with boxes fs solid 0.75 lc rgb '#e69f00' title 'hier', 'placement_h200_deepseek-v2-lite_ep64.dat' using ($1+0.10):4 with boxes fs solid 0.75 lc rgb '#0072b2' title 'fanout', 'placement_h200_deepseek-v2-lite_ep64.dat' using ($1+0.30):5 with boxes fs solid 0.75 lc rgb '#555555' title 'auto', 'placement_h200_deepseek-v2-lite_ep64.dat' using 1:6:(0.40) with xerrorbars pt 0 lw 2.5 lc rgb 'black' title 'lower bound', 'placement_h200_deepseek-v2-lite_ep64.dat' using 1:8:(sprintf('%.2f', $7)) with labels font ',9' notitle

set title 'olmoe, EP32 (4 x 8 GPUs), byte traffic'
set boxwidth 0.20
set style fill solid 0.75
set xtics ("contiguous" 1, "round-robin" 2, "eplb:0" 3, "eplb:32" 4, "eplb:64" 5, "eplb:32\nspread" 6) font ',9'
set xrange [0.4:6.6]
set yrange [0:94.2098]
set ylabel 'time, ms'
unset key
plot 'placement_h200_olmoe_ep32.dat' using ($1-0.30):2 with boxes fs solid 0.75 lc rgb '#9400d3' title 'fast', 'placement_h200_olmoe_ep32.dat' using ($1-0.10):3 with boxes fs solid 0.75 lc rgb '#e69f00' title 'hier', 'placement_h200_olmoe_ep32.dat' using ($1+0.10):4 with boxes fs solid 0.75 lc rgb '#0072b2' title 'fanout', 'placement_h200_olmoe_ep32.dat' using ($1+0.30):5 with boxes fs solid 0.75 lc rgb '#555555' title 'auto', 'placement_h200_olmoe_ep32.dat' using 1:6:(0.40) with xerrorbars pt 0 lw 2.5 lc rgb 'black' title 'lower bound', 'placement_h200_olmoe_ep32.dat' using 1:8:(sprintf('%.2f', $7)) with labels font ',9' notitle

set title 'olmoe, EP64 (8 x 8 GPUs), byte traffic'
set boxwidth 0.20
set style fill solid 0.75
set xtics ("contiguous" 1, "round-robin" 2, "eplb:0" 3, "eplb:64" 4, "eplb:128" 5, "eplb:64\nspread" 6) font ',9'
set xrange [0.4:6.6]
set yrange [0:97.9414]
set ylabel 'time, ms'
unset key
plot 'placement_h200_olmoe_ep64.dat' using ($1-0.30):2 with boxes fs solid 0.75 lc rgb '#9400d3' title 'fast', 'placement_h200_olmoe_ep64.dat' using ($1-0.10):3 with boxes fs solid 0.75 lc rgb '#e69f00' title 'hier', 'placement_h200_olmoe_ep64.dat' using ($1+0.10):4 with boxes fs solid 0.75 lc rgb '#0072b2' title 'fanout', 'placement_h200_olmoe_ep64.dat' using ($1+0.30):5 with boxes fs solid 0.75 lc rgb '#555555' title 'auto', 'placement_h200_olmoe_ep64.dat' using 1:6:(0.40) with xerrorbars pt 0 lw 2.5 lc rgb 'black' title 'lower bound', 'placement_h200_olmoe_ep64.dat' using 1:8:(sprintf('%.2f', $7)) with labels font ',9' notitle

unset multiplot
