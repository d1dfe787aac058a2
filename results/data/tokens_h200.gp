set terminal svg size 960,600 dynamic
set output 'tokens_h200.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "Token traffic (DeepSeek-V2-Lite, 26 layers): total time / token lower bound\nh200, 8 GPUs per server; fast, hier: per-server dedup; the others per-GPU bytes"
set bmargin 4
set ylabel 'time / bound (token LP + latency floor)'
set xtics ("EP16\ndispatch" 1, "EP16\ncombine" 2, "EP32\ndispatch" 3, "EP32\ncombine" 4, "EP64\ndispatch" 5, "EP64\ncombine" 6)
set xrange [0.5:6.5]
set yrange [0.72445:4.71993]
plot 'tokens_h200.dat' using 1:2 with points lw 2.0 dt 3 pt 11 ps 1.8 lc rgb '#0072b2' title 'fanout', 'tokens_h200.dat' using 1:3 with points lw 2.0 dt 2 pt 6 ps 1.8 lc rgb '#009e73' title 'nccl', 'tokens_h200.dat' using 1:4 with points lw 2.0 dt 1 pt 5 ps 1.8 lc rgb '#56b4e9' title 'pxn', 'tokens_h200.dat' using 1:5 with points lw 2.0 dt 4 pt 9 ps 1.8 lc rgb '#e69f00' title 'hier', 'tokens_h200.dat' using 1:6 with points lw 2.0 dt 1 pt 15 ps 1.8 lc rgb '#d55e00' title 'fast:dedup=gpu', 'tokens_h200.dat' using 1:7 with points lw 2.0 dt 1 pt 7 ps 1.8 lc rgb '#9400d3' title 'fast', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'bound'
