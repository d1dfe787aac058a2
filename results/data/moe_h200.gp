set terminal svg size 960,600 dynamic
set output 'moe_h200.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "Time per MoE layer (dispatch matrices, layers 1-26)\nh200, 4 x 8 GPUs, trace deepseek-v2-lite-intent-ep32.json"
set xlabel 'MoE layer'
set ylabel 'time (us)'
set xrange [0.3:26.7]
set yrange [71.5426:559.742]
plot 'moe_h200.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 7 ps 1.2 lc rgb '#9400d3' title 'fast', 'moe_h200.dat' using 1:3 with linespoints lw 2.0 dt 2 pt 6 ps 1.2 lc rgb '#009e73' title 'nccl', 'moe_h200.dat' using 1:4 with linespoints lw 2.0 dt 1 pt 5 ps 1.2 lc rgb '#56b4e9' title 'pxn', 'moe_h200.dat' using 1:5 with linespoints lw 2.0 dt 4 pt 9 ps 1.2 lc rgb '#e69f00' title 'hier', 'moe_h200.dat' using 1:6 with linespoints lw 2.0 dt 5 pt 13 ps 1.2 lc rgb '#c8b400' title 'spreadout', 'moe_h200.dat' using 1:7 with linespoints lw 2.0 dt 3 pt 11 ps 1.2 lc rgb '#0072b2' title 'fanout', 'moe_h200.dat' using 1:8 with lines dt 2 lw 2 lc rgb 'black' title 'lower bound'
