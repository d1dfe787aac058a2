set terminal svg size 960,600 dynamic
set output 'moe_mi300x-100g.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "Time per MoE layer (dispatch matrices, layers 1-26)\nmi300x-100g, 4 x 8 GPUs, trace deepseek-v2-lite-intent-ep32.json"
set xlabel 'MoE layer'
set ylabel 'time (us)'
set xrange [0.3:26.7]
set yrange [302.651:2340.34]
plot 'moe_mi300x-100g.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 7 ps 1.2 lc rgb '#9400d3' title 'fast', 'moe_mi300x-100g.dat' using ($1-0.080):3 with linespoints lw 4.5 dt 2 pt 6 ps 1.2 lc rgb '#009e73' title 'nccl', 'moe_mi300x-100g.dat' using 1:5 with linespoints lw 2.0 dt 4 pt 9 ps 1.2 lc rgb '#e69f00' title 'hier', 'moe_mi300x-100g.dat' using 1:6 with linespoints lw 2.0 dt 5 pt 13 ps 1.2 lc rgb '#c8b400' title 'spreadout', 'moe_mi300x-100g.dat' using 1:7 with linespoints lw 2.0 dt 3 pt 11 ps 1.2 lc rgb '#0072b2' title 'fanout', 'moe_mi300x-100g.dat' using ($1+0.080):4 with linespoints lw 2.9 dt 3 pt 4 ps 1.7 lc rgb '#56b4e9' title 'pxn', 'moe_mi300x-100g.dat' using 1:8 with lines dt 2 lw 2 lc rgb 'black' title 'lower bound'
