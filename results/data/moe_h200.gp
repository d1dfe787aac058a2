set terminal svg size 960,600 dynamic
set output 'moe_h200.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd 'results/data'
set title 'DeepSeek-V2-Lite dispatch per layer (EP32 on h200 4x8)'
set xlabel 'MoE layer'
set ylabel 'time (ms)'
set logscale y
plot 'moe_h200.dat' using 1:2 with linespoints lw 2 title 'fast', 'moe_h200.dat' using 1:3 with linespoints lw 2 title 'nccl', 'moe_h200.dat' using 1:4 with linespoints lw 2 title 'pxn', 'moe_h200.dat' using 1:5 with linespoints lw 2 title 'hier', 'moe_h200.dat' using 1:6 with linespoints lw 2 title 'spreadout', 'moe_h200.dat' using 1:7 with linespoints lw 2 title 'fanout', 'moe_h200.dat' using 1:8 with lines dt 2 lw 2 lc rgb 'black' title 'LP bound'
